//! One registry request as the client makes it: plain HTTP or TLS on a fresh
//! connection, the body read under a cap, redirects followed, and the
//! registry's authentication challenge answered (anonymous or basic
//! credentials exchanged for a bearer token) before the request is sent again.

use super::*;

impl RegistryClient {
    pub(super) async fn send_typed(
        &self,
        what: &str,
        method: Method,
        url: &str,
        content_type: &str,
        body: Bytes,
    ) -> Result<(StatusCode, HeaderMap, Bytes), RegistryError> {
        self.request(
            what,
            method,
            url,
            None,
            Some((content_type, body)),
            MAX_MANIFEST_BYTES,
        )
        .await
    }

    pub(super) async fn send(
        &self,
        what: &str,
        method: Method,
        url: &str,
        accept: Option<&str>,
        body: Option<Bytes>,
        limit: usize,
    ) -> Result<(StatusCode, HeaderMap, Bytes), RegistryError> {
        let body = body.map(|b| ("application/octet-stream", b));
        self.request(what, method, url, accept, body, limit).await
    }

    /// One request, following redirects of a GET, under [`REQUEST_TIMEOUT`];
    /// a 401 from the registry is answered once (see [`super::auth`]).
    async fn request(
        &self,
        what: &str,
        method: Method,
        url: &str,
        accept: Option<&str>,
        body: Option<(&str, Bytes)>,
        limit: usize,
    ) -> Result<(StatusCode, HeaderMap, Bytes), RegistryError> {
        let origin = authority(url);
        let mut url = url.to_string();
        let mut authorized = false;
        // Redirects, and one more turn for the 401.
        for _ in 0..=MAX_REDIRECTS + 1 {
            // Credentials go to the registry only, never to a storage host it redirects to.
            let at_origin = authority(&url) == origin;
            let authorization = if at_origin {
                self.authorizations
                    .lock()
                    .expect("authorizations lock")
                    .get(&origin)
                    .cloned()
            } else {
                None
            };
            let attempt = self.once(
                what,
                method.clone(),
                &url,
                Asking {
                    accept,
                    authorization: authorization.as_deref(),
                },
                body.clone(),
                limit,
            );
            let (status, headers, bytes) =
                tokio::time::timeout(REQUEST_TIMEOUT, attempt)
                    .await
                    .map_err(|_| unreachable(&url, "no answer within 60 s".into()))??;
            if status == StatusCode::UNAUTHORIZED && at_origin && !authorized {
                authorized = true;
                if let Some(value) = self.authorize(what, &origin, &headers).await? {
                    self.authorizations
                        .lock()
                        .expect("authorizations lock")
                        .insert(origin.clone(), value);
                    continue;
                }
            }
            if status.is_redirection()
                && method == Method::GET
                && let Some(location) = headers.get(header::LOCATION).and_then(|v| v.to_str().ok())
            {
                url = absolute(&url, location).map_err(|reason| RegistryError::Protocol {
                    what: what.into(),
                    reason,
                })?;
                continue;
            }
            return Ok((status, headers, bytes));
        }
        Err(RegistryError::Protocol {
            what: what.into(),
            reason: format!("more than {MAX_REDIRECTS} redirects"),
        })
    }

    /// The `Authorization` that answers a 401's challenge, if there is one:
    /// the credentials for `Basic`, a token from the realm for `Bearer`.
    async fn authorize(
        &self,
        what: &str,
        registry: &str,
        headers: &HeaderMap,
    ) -> Result<Option<String>, RegistryError> {
        let basic = self.options.credentials.basic(registry);
        let challenge = headers
            .get(header::WWW_AUTHENTICATE)
            .and_then(|v| v.to_str().ok())
            .and_then(Challenge::parse);
        let (realm, service, scope) = match challenge {
            Some(Challenge::Basic) => return Ok(basic),
            Some(Challenge::Bearer {
                realm,
                service,
                scope,
            }) => (realm, service, scope),
            None => return Ok(None),
        };
        let mut query = Vec::new();
        for (key, value) in [("service", service), ("scope", scope)] {
            if let Some(value) = value {
                query.push(format!("{key}={}", value.replace(' ', "%20")));
            }
        }
        let separator = if realm.contains('?') { '&' } else { '?' };
        let url = if query.is_empty() {
            realm
        } else {
            format!("{realm}{separator}{}", query.join("&"))
        };
        let what = format!("{what}: getting a token from {url}");
        let (status, _, body) = self
            .once(
                &what,
                Method::GET,
                &url,
                Asking {
                    accept: None,
                    authorization: basic.as_deref(),
                },
                None,
                MAX_MANIFEST_BYTES,
            )
            .await?;
        expect(&what, status, StatusCode::OK, &body)?;
        #[derive(serde::Deserialize)]
        struct Token {
            token: Option<String>,
            access_token: Option<String>,
        }
        let token: Token = serde_json::from_slice(&body).map_err(|e| RegistryError::Protocol {
            what: what.clone(),
            reason: e.to_string(),
        })?;
        let token = token
            .token
            .or(token.access_token)
            .ok_or(RegistryError::Protocol {
                what,
                reason: "the answer has no token".into(),
            })?;
        Ok(Some(format!("Bearer {token}")))
    }

    async fn once(
        &self,
        what: &str,
        method: Method,
        url: &str,
        asking: Asking<'_>,
        body: Option<(&str, Bytes)>,
        limit: usize,
    ) -> Result<(StatusCode, HeaderMap, Bytes), RegistryError> {
        let Asking {
            accept,
            authorization,
        } = asking;
        let uri: Uri = url.parse().map_err(|e| RegistryError::Protocol {
            what: what.into(),
            reason: format!("bad URL {url}: {e}"),
        })?;
        let tls = uri.scheme_str() == Some("https");
        let host = uri
            .host()
            .unwrap_or_default()
            .trim_matches(['[', ']'])
            .to_string();
        let port = uri.port_u16().unwrap_or(if tls { 443 } else { 80 });
        let stream = TcpStream::connect((host.as_str(), port))
            .await
            .map_err(|e| unreachable(url, e.to_string()))?;
        let authority = uri.authority().map(|a| a.to_string()).unwrap_or_default();
        let mut request = Request::builder()
            .method(method)
            .uri(uri.path_and_query().map(|p| p.as_str()).unwrap_or("/"))
            .header(header::HOST, authority)
            .header(
                header::USER_AGENT,
                concat!("wharf/", env!("CARGO_PKG_VERSION")),
            );
        if let Some(accept) = accept {
            request = request.header(header::ACCEPT, accept);
        }
        if let Some(authorization) = authorization {
            request = request.header(header::AUTHORIZATION, authorization);
        }
        let payload = match body {
            Some((content_type, bytes)) => {
                request = request.header(header::CONTENT_TYPE, content_type);
                bytes
            }
            None => Bytes::new(),
        };
        let request = request
            .body(Full::new(payload))
            .map_err(|e| RegistryError::Protocol {
                what: what.into(),
                reason: e.to_string(),
            })?;
        let response = if tls {
            let name = rustls::pki_types::ServerName::try_from(host.clone())
                .map_err(|e| unreachable(url, e.to_string()))?;
            let stream = crate::outbound::tls()
                .connect(name, stream)
                .await
                .map_err(|e| unreachable(url, format!("TLS: {e}")))?;
            crate::outbound::exchange(TokioIo::new(stream), request)
                .await
                .map_err(|e| unreachable(url, e.to_string()))?
        } else {
            crate::outbound::exchange(TokioIo::new(stream), request)
                .await
                .map_err(|e| unreachable(url, e.to_string()))?
        };
        let (parts, body) = response.into_parts();
        let bytes = Limited::new(body, limit)
            .collect()
            .await
            .map_err(|e| {
                if e.is::<http_body_util::LengthLimitError>() {
                    RegistryError::TooLarge {
                        what: what.into(),
                        limit,
                    }
                } else {
                    unreachable(url, e.to_string())
                }
            })?
            .to_bytes();
        Ok((parts.status, parts.headers, bytes))
    }
}

/// The request headers that vary: what is accepted, and the authorization.
struct Asking<'a> {
    accept: Option<&'a str>,
    authorization: Option<&'a str>,
}

/// `host:port` of a URL (what credentials are keyed by).
fn authority(url: &str) -> String {
    url.parse::<Uri>()
        .ok()
        .and_then(|u| u.authority().map(|a| a.to_string()))
        .unwrap_or_default()
}

fn unreachable(url: &str, reason: String) -> RegistryError {
    let registry = url
        .parse::<Uri>()
        .ok()
        .and_then(|u| u.authority().map(|a| a.to_string()))
        .unwrap_or_else(|| url.to_string());
    RegistryError::Unreachable { registry, reason }
}

/// `location` (absolute, or a path on the same host) as an absolute URL.
pub(super) fn absolute(base: &str, location: &str) -> Result<String, String> {
    if location.starts_with("http://") || location.starts_with("https://") {
        return Ok(location.to_string());
    }
    if !location.starts_with('/') {
        return Err(format!("unexpected Location `{location}`"));
    }
    let uri: Uri = base.parse().map_err(|e| format!("bad URL {base}: {e}"))?;
    Ok(format!(
        "{}://{}{location}",
        uri.scheme_str().unwrap_or("https"),
        uri.authority().map(|a| a.as_str()).unwrap_or_default()
    ))
}
