//! Task ids: 128 random bits from the operating system, in hex, after the
//! replica's route and a `.` when there is one (`--session-route`), so a load
//! balancer can route `Mcp-Name` by the id alone, as it routes legacy
//! `Mcp-Session-Id`s.

/// A task id, as clients send it back in `taskId` and `Mcp-Name`.
pub type TaskId = String;

/// A fresh, unguessable task id: `ROUTE.<32 hex digits>` or `<32 hex digits>`.
pub fn new_task_id(route: Option<&str>) -> TaskId {
    let mut random = [0u8; 16];
    getrandom::fill(&mut random).expect("the operating system's random number generator");
    let hex: String = random.iter().map(|b| format!("{b:02x}")).collect();
    match route {
        Some(route) => format!("{route}.{hex}"),
        None => hex,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_id_is_the_route_then_128_random_bits_in_hex() {
        let id = new_task_id(Some("pod-3"));
        let (route, random) = id.split_once('.').unwrap();
        assert_eq!(route, "pod-3");
        assert_eq!(random.len(), 32);
        assert!(random.bytes().all(|b| b.is_ascii_hexdigit()));
        let bare = new_task_id(None);
        assert_eq!(bare.len(), 32);
        assert!(!bare.contains('.'));
    }

    #[test]
    fn ids_do_not_repeat() {
        let ids: std::collections::HashSet<TaskId> = (0..1000).map(|_| new_task_id(None)).collect();
        assert_eq!(ids.len(), 1000);
    }
}
