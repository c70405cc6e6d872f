//! Registry credentials and the two challenges a registry answers 401 with.
//!
//! Credentials come from a Docker-style `config.json` (`auths.HOST.auth`,
//! base64 `user:password`, or `username` and `password`): by default
//! `$DOCKER_CONFIG/config.json` or `~/.docker/config.json`, else the file of
//! `--registry-auth`. A `Basic` challenge is answered with them; a `Bearer`
//! challenge (the token flow of Docker Hub, GHCR and most hosted registries)
//! by fetching a token from its realm for its scope, with them if there are
//! any, anonymously otherwise. Credential helpers (`credsStore`) are not run.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use serde::Deserialize;

/// Why a credentials file was refused.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum AuthError {
    #[error("cannot read the registry credentials {path}: {reason}")]
    Read { path: String, reason: String },
    #[error("the registry credentials {path} are not a Docker config.json: {reason}")]
    Format { path: String, reason: String },
    #[error(
        "the registry credentials {path}: the `auth` of `{registry}` is not base64 of USER:PASSWORD"
    )]
    BadAuth { path: String, registry: String },
}

/// A user name and password per registry (`host` or `host:port`).
#[derive(Debug, Clone, Default)]
pub struct Credentials {
    by_registry: HashMap<String, (String, String)>,
}

/// What a 401 asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Challenge {
    Basic,
    Bearer {
        realm: String,
        service: Option<String>,
        scope: Option<String>,
    },
}

impl Credentials {
    /// `$DOCKER_CONFIG/config.json`, else `~/.docker/config.json`.
    pub fn default_path() -> Option<PathBuf> {
        match std::env::var_os("DOCKER_CONFIG") {
            Some(dir) => Some(PathBuf::from(dir).join("config.json")),
            None => dirs::home_dir().map(|home| home.join(".docker/config.json")),
        }
    }

    /// Reads a Docker `config.json`.
    pub fn from_file(path: &Path) -> Result<Self, AuthError> {
        let shown = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| AuthError::Read {
            path: shown.clone(),
            reason: e.to_string(),
        })?;
        Self::parse(&shown, &text)
    }

    /// Parses the text of a Docker `config.json`.
    pub fn parse(path: &str, text: &str) -> Result<Self, AuthError> {
        #[derive(Deserialize)]
        struct Config {
            #[serde(default)]
            auths: HashMap<String, Entry>,
        }
        #[derive(Deserialize)]
        struct Entry {
            auth: Option<String>,
            username: Option<String>,
            password: Option<String>,
        }
        let config: Config = serde_json::from_str(text).map_err(|e| AuthError::Format {
            path: path.into(),
            reason: e.to_string(),
        })?;
        let mut by_registry = HashMap::new();
        for (key, entry) in config.auths {
            // Keys may be URLs (`https://index.docker.io/v1/`).
            let registry = key
                .trim_start_matches("https://")
                .trim_start_matches("http://")
                .split('/')
                .next()
                .unwrap_or_default()
                .to_string();
            let pair = match (entry.auth, entry.username, entry.password) {
                (Some(auth), _, _) if !auth.is_empty() => {
                    let bad = || AuthError::BadAuth {
                        path: path.into(),
                        registry: registry.clone(),
                    };
                    let decoded = BASE64.decode(auth.trim()).map_err(|_| bad())?;
                    let decoded = String::from_utf8(decoded).map_err(|_| bad())?;
                    let (user, password) = decoded.split_once(':').ok_or_else(bad)?;
                    (user.to_string(), password.to_string())
                }
                (_, Some(user), Some(password)) => (user, password),
                _ => continue,
            };
            by_registry.insert(registry, pair);
        }
        Ok(Self { by_registry })
    }

    /// The `Authorization: Basic …` value for `registry`, if there are credentials.
    pub fn basic(&self, registry: &str) -> Option<String> {
        self.by_registry.get(registry).map(|(user, password)| {
            format!("Basic {}", BASE64.encode(format!("{user}:{password}")))
        })
    }
}

impl Challenge {
    /// Parses a `WWW-Authenticate` value.
    pub fn parse(header: &str) -> Option<Self> {
        let (scheme, params) = header.trim().split_once(' ').unwrap_or((header.trim(), ""));
        if scheme.eq_ignore_ascii_case("basic") {
            return Some(Self::Basic);
        }
        if !scheme.eq_ignore_ascii_case("bearer") {
            return None;
        }
        let mut fields: HashMap<String, String> = HashMap::new();
        let mut rest = params.trim();
        while !rest.is_empty() {
            let (key, after) = rest.split_once('=')?;
            let (value, after) = match after.strip_prefix('"') {
                Some(quoted) => {
                    let end = quoted.find('"')?;
                    (&quoted[..end], &quoted[end + 1..])
                }
                None => after.split_once(',').unwrap_or((after, "")),
            };
            fields.insert(key.trim().to_ascii_lowercase(), value.to_string());
            rest = after.trim_start_matches([',', ' ']);
        }
        Some(Self::Bearer {
            realm: fields.remove("realm")?,
            service: fields.remove("service"),
            scope: fields.remove("scope"),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_docker_config_gives_basic_credentials() {
        let text = r#"{"auths": {
            "127.0.0.1:5000": {"auth": "YWxpY2U6czNjcmV0"},
            "https://index.docker.io/v1/": {"username": "bob", "password": "pw"},
            "ghcr.io": {}
        }, "credsStore": "desktop"}"#;
        let c = Credentials::parse("config.json", text).unwrap();
        assert_eq!(c.basic("127.0.0.1:5000").unwrap(), "Basic YWxpY2U6czNjcmV0");
        assert_eq!(
            c.basic("index.docker.io").unwrap(),
            format!("Basic {}", BASE64.encode("bob:pw"))
        );
        assert_eq!(c.basic("ghcr.io"), None);
    }

    #[test]
    fn bad_credentials_say_why() {
        assert_eq!(
            Credentials::parse("c.json", "7").unwrap_err().to_string(),
            "the registry credentials c.json are not a Docker config.json: invalid type: integer `7`, expected struct Config at line 1 column 1"
        );
        assert_eq!(
            Credentials::parse("c.json", r#"{"auths":{"h":{"auth":"bm9jb2xvbg=="}}}"#)
                .unwrap_err()
                .to_string(),
            "the registry credentials c.json: the `auth` of `h` is not base64 of USER:PASSWORD"
        );
    }

    #[test]
    fn challenges_parse() {
        assert_eq!(
            Challenge::parse(r#"Basic realm="Registry""#),
            Some(Challenge::Basic)
        );
        assert_eq!(
            Challenge::parse(
                r#"Bearer realm="https://auth.example/token",service="registry.example",scope="repository:a/b:pull,push""#
            ),
            Some(Challenge::Bearer {
                realm: "https://auth.example/token".into(),
                service: Some("registry.example".into()),
                scope: Some("repository:a/b:pull,push".into()),
            })
        );
        assert_eq!(Challenge::parse("Negotiate abc"), None);
        assert_eq!(Challenge::parse(r#"Bearer service="x""#), None);
    }
}
