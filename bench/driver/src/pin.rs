//! Pinning the driver and the stdio servers to CPUs.
//!
//! Over stdio a round trip is two wake-ups, one each way. Whether the kernel
//! runs the client and the server on one core (each wakes the other with no
//! inter-processor interrupt, and the round trip is the sum of both sides'
//! CPU time) or on two (each wake-up is an interrupt to the other core, which
//! on a VM costs more than a small call, and work done after the answer runs
//! while the client reads it) changes the p50 more than either server does,
//! and the kernel switches between the two as it sees fit. Runs with the
//! placement fixed show each side of that.

use std::io;
use std::process::Command;

use anyhow::{Result, bail};

/// Where the stdio runs place the driver and the servers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cores {
    /// Wherever the kernel puts them.
    Free,
    /// All on the first CPU.
    Shared,
    /// The servers on the first CPU, the driver on the second.
    Apart,
}

impl Cores {
    /// The CPU the servers run on, if pinned.
    pub fn server_cpu(self) -> Option<usize> {
        match self {
            Cores::Free => None,
            Cores::Shared | Cores::Apart => Some(0),
        }
    }

    /// The CPU the driver runs on, if pinned.
    pub fn driver_cpu(self) -> Option<usize> {
        match self {
            Cores::Free => None,
            Cores::Shared => Some(0),
            Cores::Apart => Some(1),
        }
    }

    /// The report's name for stdio runs placed this way.
    pub fn transport(self) -> &'static str {
        match self {
            Cores::Free => "stdio",
            Cores::Shared => "stdio-1core",
            Cores::Apart => "stdio-2cores",
        }
    }
}

/// A CPU set holding only `cpu`.
fn only(cpu: usize) -> libc::cpu_set_t {
    // SAFETY: cpu_set_t is a plain bit array; all zeroes is the empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: `set` is a valid cpu_set_t and CPU_SET bounds-checks `cpu`.
    unsafe { libc::CPU_SET(cpu, &mut set) };
    set
}

/// Sets the affinity of `tid` (0: the calling thread).
fn set_affinity(tid: libc::pid_t, set: &libc::cpu_set_t) -> io::Result<()> {
    // SAFETY: `set` points to a valid cpu_set_t of the size given.
    let done = unsafe { libc::sched_setaffinity(tid, std::mem::size_of_val(set), set) };
    if done == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Makes `cmd`'s process (and every thread it starts) run on `cpu` only.
pub fn pin_command(cmd: &mut Command, cpu: usize) {
    use std::os::unix::process::CommandExt;
    let set = only(cpu);
    // SAFETY: sched_setaffinity is async-signal-safe and allocates nothing.
    unsafe {
        cmd.pre_exec(move || set_affinity(0, &set));
    }
}

/// The calling thread pinned to `cpu` until the guard is dropped, when it may
/// run anywhere again.
pub struct PinnedThread {
    before: libc::cpu_set_t,
}

impl PinnedThread {
    pub fn to(cpu: usize) -> Result<Self> {
        if cpu >= available() {
            bail!("CPU {cpu} does not exist here ({} CPUs)", available());
        }
        // SAFETY: as in `only`.
        let mut before: libc::cpu_set_t = unsafe { std::mem::zeroed() };
        // SAFETY: `before` is a valid cpu_set_t of the size given.
        let got =
            unsafe { libc::sched_getaffinity(0, std::mem::size_of_val(&before), &mut before) };
        if got != 0 {
            bail!("reading the CPU affinity: {}", io::Error::last_os_error());
        }
        set_affinity(0, &only(cpu))?;
        Ok(Self { before })
    }
}

impl Drop for PinnedThread {
    fn drop(&mut self) {
        let _ = set_affinity(0, &self.before);
    }
}

/// How many CPUs this process may run on.
pub fn available() -> usize {
    std::thread::available_parallelism().map_or(1, usize::from)
}
