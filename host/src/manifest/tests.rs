use super::*;

fn path() -> PathBuf {
    PathBuf::from("/plugins/demo.toml")
}

fn parse_err(text: &str) -> String {
    parse(&path(), text).unwrap_err().to_string()
}

fn resolve_in(folder: &Path, text: &str) -> Result<Resolved, KeyError> {
    let manifest = parse(&path(), text).unwrap();
    resolve(
        &manifest,
        folder,
        &CallLimits::default(),
        &Ceilings::default(),
        |name| (name == "WHARF_TEST_VAR").then(|| "from-wharf".to_string()),
    )
}

#[test]
fn a_full_manifest_resolves() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("data")).unwrap();
    let resolved = resolve_in(
        dir.path(),
        r#"
        [limits]
        memory-mib = 64
        timeout-ms = 5000
        fuel = 1000000
        max-concurrent-calls = 2
        max-output-bytes = 1024

        [[dir]]
        host = "data"
        guest = "/data"

        [[dir]]
        host = "data"
        guest = "/scratch"
        mode = "read-write"

        [http]
        allow = ["api.example.com", "127.0.0.1:8080", "*.example.org"]

        [env]
        pass = ["WHARF_TEST_VAR", "WHARF_UNSET_VAR"]
        set = { LANG = "C" }

        [config]
        greeting = "hello"
        "#,
    )
    .unwrap();
    let limits = &resolved.limits;
    assert_eq!(limits.memory_bytes, 64 << 20);
    assert_eq!(limits.timeout, Duration::from_millis(5000));
    assert_eq!(limits.fuel, Some(1_000_000));
    assert_eq!(limits.max_concurrent_calls, 2);
    assert_eq!(limits.max_output_bytes, 1024);
    let grants = &resolved.grants;
    let data = dir.path().join("data").canonicalize().unwrap();
    assert_eq!(
        grants.dirs,
        vec![
            DirGrant {
                host: data.clone(),
                guest: "/data".into(),
                writable: false
            },
            DirGrant {
                host: data,
                guest: "/scratch".into(),
                writable: true
            },
        ]
    );
    assert!(
        grants
            .http
            .allows(&"http://127.0.0.1:8080/x".parse().unwrap())
    );
    assert_eq!(
        grants.env,
        vec![
            ("WHARF_TEST_VAR".to_string(), "from-wharf".to_string()),
            ("LANG".to_string(), "C".to_string())
        ]
    );
    assert_eq!(grants.config, vec![("greeting".into(), "hello".into())]);
}

#[test]
fn an_empty_manifest_is_the_defaults() {
    let resolved = resolve_in(Path::new("/"), "").unwrap();
    assert_eq!(resolved.limits, CallLimits::default());
    assert_eq!(resolved.grants, Grants::default());
    assert!(resolved.prefix_names);
}

#[test]
fn the_tool_prefix_can_be_turned_off() {
    let resolved = resolve_in(Path::new("/"), "[names]\nprefix = false\n").unwrap();
    assert!(!resolved.prefix_names);
}

#[test]
fn scopes_apply_to_the_plugin_and_to_single_tools() {
    let resolved = resolve_in(
        Path::new("/"),
        "[auth]\nscopes = [\"files:read\"]\n[auth.tools]\ndelete = [\"files:write\", \"files:read\"]\n",
    )
    .unwrap();
    assert_eq!(resolved.scopes.for_tool("list"), ["files:read"]);
    assert_eq!(
        resolved.scopes.for_tool("delete"),
        ["files:read", "files:write"]
    );
    let none = resolve_in(Path::new("/"), "").unwrap();
    assert!(none.scopes.for_tool("list").is_empty());
}

#[test]
fn malformed_scopes_are_named() {
    assert_eq!(
        resolve_in(Path::new("/"), "[auth]\nscopes = [\"a b\"]\n").unwrap_err(),
        (
            "auth.scopes[0]".to_string(),
            "`a b` is not a scope: printable ASCII without spaces, `\"` or `\\`".to_string()
        )
    );
    assert_eq!(
        resolve_in(Path::new("/"), "[auth.tools]\nrm = [\"ok\", \"\"]\n").unwrap_err(),
        (
            "auth.tools.rm[1]".to_string(),
            "`` is not a scope: printable ASCII without spaces, `\"` or `\\`".to_string()
        )
    );
    assert_eq!(
        parse_err("[auth]\nscope = []\n"),
        "invalid manifest /plugins/demo.toml, key `auth.scope`: unknown field `scope`, \
         expected one of `scopes`, `tools`, `caller` (line 2)"
    );
}

#[test]
fn secret_argument_fields_are_listed_for_the_audit_trail() {
    let resolved = resolve_in(
        Path::new("/"),
        "[audit]\nsecret = [\"password\", \"token\"]\n",
    );
    assert_eq!(resolved.unwrap().secret_fields, ["password", "token"]);
    assert_eq!(
        resolve_in(Path::new("/"), "[audit]\nsecret = [\"ok\", \"\"]\n").unwrap_err(),
        (
            "audit.secret[1]".to_string(),
            "a field name cannot be empty".to_string()
        )
    );
    assert!(
        resolve_in(Path::new("/"), "")
            .unwrap()
            .secret_fields
            .is_empty()
    );
}

#[test]
fn unknown_keys_are_named() {
    assert_eq!(
        parse_err("[limits]\nmemory-mb = 3\n"),
        "invalid manifest /plugins/demo.toml, key `limits.memory-mb`: unknown field `memory-mb`, \
         expected one of `memory-mib`, `timeout-ms`, `fuel`, `max-concurrent-calls`, \
         `max-output-bytes` (line 2)"
    );
    assert_eq!(
        parse_err("[network]\n"),
        "invalid manifest /plugins/demo.toml, key `network`: unknown field `network`, \
         expected one of `limits`, `dir`, `http`, `env`, `config`, `names`, `auth`, `audit` (line 1)"
    );
    assert_eq!(
        parse_err("[names]\nprefixed = false\n"),
        "invalid manifest /plugins/demo.toml, key `names.prefixed`: unknown field `prefixed`, \
         expected `prefix` (line 2)"
    );
}

#[test]
fn wrong_types_are_named() {
    assert_eq!(
        parse_err("[limits]\ntimeout-ms = \"soon\"\n"),
        "invalid manifest /plugins/demo.toml, key `limits.timeout-ms`: invalid type: \
         string \"soon\", expected u64 (line 2)"
    );
    assert_eq!(
        parse_err("[[dir]]\nhost = \"x\"\nguest = \"/x\"\nmode = \"rw\"\n"),
        "invalid manifest /plugins/demo.toml, key `dir[0].mode`: unknown variant `rw`, \
         expected `read-only` or `read-write` (line 4)"
    );
    assert_eq!(
        parse_err("[config]\nretries = 3\n"),
        "invalid manifest /plugins/demo.toml, key `config.retries`: invalid type: \
         integer `3`, expected a string (line 2)"
    );
}

#[test]
fn syntax_errors_give_the_line() {
    let message = parse_err("[limits\n");
    assert!(
        message.starts_with("invalid manifest /plugins/demo.toml: "),
        "{message}"
    );
    assert!(message.ends_with("(line 1)"), "{message}");
}

#[test]
fn missing_directories_and_bad_guest_paths_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (key, message) =
        resolve_in(dir.path(), "[[dir]]\nhost = \"nope\"\nguest = \"/d\"\n").unwrap_err();
    assert_eq!(key, "dir[0].host");
    assert!(message.contains("No such file or directory"), "{message}");

    std::fs::create_dir(dir.path().join("d")).unwrap();
    let (key, message) =
        resolve_in(dir.path(), "[[dir]]\nhost = \"d\"\nguest = \"/d/../etc\"\n").unwrap_err();
    assert_eq!(key, "dir[0].guest");
    assert_eq!(
        message,
        "`/d/../etc` must be an absolute path without `.` or `..`"
    );
}

#[test]
fn directories_are_canonicalised() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("a/b")).unwrap();
    std::os::unix::fs::symlink(dir.path().join("a/b"), dir.path().join("link")).unwrap();
    let resolved = resolve_in(
        dir.path(),
        "[[dir]]\nhost = \"a/../link\"\nguest = \"/b\"\n",
    )
    .unwrap();
    assert_eq!(
        resolved.grants.dirs[0].host,
        dir.path().join("a/b").canonicalize().unwrap()
    );
}

#[test]
fn limits_above_the_ceilings_are_refused() {
    let (key, message) = resolve_in(Path::new("/"), "[limits]\nmemory-mib = 8192\n").unwrap_err();
    assert_eq!(key, "limits.memory-mib");
    assert_eq!(
        message,
        "8192 is above the server's ceiling of 4096 MiB (--max-memory-mib)"
    );
    let (key, _) = resolve_in(Path::new("/"), "[limits]\ntimeout-ms = 0\n").unwrap_err();
    assert_eq!(key, "limits.timeout-ms");
}

#[test]
fn bad_host_patterns_are_named() {
    let (key, message) = resolve_in(
        Path::new("/"),
        "[http]\nallow = [\"ok.com\", \"https://x.com/\"]\n",
    )
    .unwrap_err();
    assert_eq!(key, "http.allow[1]");
    assert_eq!(
        message,
        "`https://x.com/` is not a host name or host:port (no scheme, path or user info)"
    );
}

#[test]
fn a_missing_manifest_means_defaults() {
    let resolved = load(
        Path::new("/nonexistent/x.toml"),
        &CallLimits::default(),
        &Ceilings::default(),
    )
    .unwrap();
    assert_eq!(resolved.grants, Grants::default());
}
