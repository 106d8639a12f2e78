//! Which protocol version a session speaks. We ask for 2026-07-28 first (`server/discover`: no
//! handshake, every request then carries its own metadata and, over HTTP, its headers) and fall
//! back, per server, to the `initialize` handshake at 2025-11-25, which a server may answer with
//! an older version it speaks (2025-06-18, 2025-03-26). rmcp does both; this module picks the
//! versions and makes the fallback work with servers written before `server/discover` existed.

use std::future::Future;

use rmcp::model::{
    ClientRequest, ErrorCode, ErrorData, JsonRpcError, JsonRpcMessage, JsonRpcVersion2_0,
    NumberOrString, ProtocolVersion, RequestId, ServerResult,
};
use rmcp::service::{ClientLifecycleMode, RoleClient, RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;

/// The versions we speak, newest first: 2026-07-28, else the handshake at 2025-11-25.
pub(super) fn lifecycle() -> ClientLifecycleMode {
    ClientLifecycleMode::Auto {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        legacy_version: Some(ProtocolVersion::LATEST_WITH_INITIALIZE),
    }
}

/// The `initialize` handshake alone (at 2025-11-25, which the handler's `get_info` names): for
/// an older HTTP server that fails `server/discover` in a way the same connection cannot
/// recover from.
pub(super) fn handshake_only() -> ClientLifecycleMode {
    ClientLifecycleMode::Initialize
}

/// Is `version` one with the `initialize` handshake (before 2026-07-28)?
pub fn is_legacy(version: &str) -> bool {
    version < ProtocolVersion::V_2026_07_28.as_str()
}

/// A transport that makes an older server's odd answer to `server/discover` read as "I do not
/// know that method". The protocol says an older server answers an unknown method with an
/// error, and rmcp then starts the `initialize` handshake on the same connection; some servers
/// answer every request they do not know with an empty result instead, which rmcp would take
/// for a broken discovery and give up. Only the answer to the one `server/discover` request is
/// touched; every other message passes as it is.
///
/// It also drops a late answer to `server/discover`. rmcp waits 10 s for it, then starts the
/// handshake on the same connection; a server that was only slow to start (`npx -y` fetching
/// the package on first use) then answers `server/discover` first, and rmcp, expecting the
/// answer to `initialize`, would fail the session on it.
pub(super) struct DiscoverFallback<T> {
    inner: T,
    /// The id of the `server/discover` request in flight, until its answer arrives.
    discover: Option<RequestId>,
    /// A `server/discover` given up on (the handshake was sent instead): its answer, if it
    /// comes before the handshake's, is dropped.
    abandoned: Option<RequestId>,
    /// The handshake's id while `abandoned` is set: once it is answered, a late answer to the
    /// discovery can no longer come first (a server answers in order).
    initialize: Option<RequestId>,
}

impl<T> DiscoverFallback<T> {
    pub(super) fn new(inner: T) -> Self {
        DiscoverFallback {
            inner,
            discover: None,
            abandoned: None,
            initialize: None,
        }
    }
}

/// Does `answer` (an id a server sent back) answer the request `asked`? As rmcp matches them:
/// a number may come back as its decimal string.
fn same_id(asked: &RequestId, answer: &RequestId) -> bool {
    asked == answer
        || matches!((asked, answer), (NumberOrString::Number(n), NumberOrString::String(s)) if s.parse::<i64>().ok() == Some(*n))
}

/// Does `message` answer the request `asked`? An error without an id (a server that could not
/// read the request) counts as the answer to the one request in flight.
fn answers(message: &RxJsonRpcMessage<RoleClient>, asked: &RequestId) -> bool {
    match message {
        JsonRpcMessage::Response(response) => same_id(asked, &response.id),
        JsonRpcMessage::Error(error) => error.id.as_ref().is_none_or(|id| same_id(asked, id)),
        _ => false,
    }
}

impl<T> Transport<RoleClient> for DiscoverFallback<T>
where
    T: Transport<RoleClient>,
{
    type Error = T::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        if let JsonRpcMessage::Request(request) = &item {
            match request.request {
                ClientRequest::DiscoverRequest(_) => self.discover = Some(request.id.clone()),
                // The handshake while discovery is unanswered: rmcp gave up waiting for it.
                ClientRequest::InitializeRequest(_) => {
                    if let Some(id) = self.discover.take() {
                        tracing::info!("server/discover was not answered in time: starting the initialize handshake");
                        self.abandoned = Some(id);
                        self.initialize = Some(request.id.clone());
                    }
                }
                _ => {}
            }
        }
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        let mut message = self.inner.receive().await?;
        while let Some(abandoned) = &self.abandoned {
            if answers(&message, abandoned) {
                tracing::debug!("dropped the late answer to server/discover");
                self.abandoned = None;
                self.initialize = None;
                message = self.inner.receive().await?;
                continue;
            }
            if self
                .initialize
                .as_ref()
                .is_some_and(|id| answers(&message, id))
            {
                // The handshake was answered first: the discovery never will be (or too late
                // to matter: its id is never used again).
                self.abandoned = None;
                self.initialize = None;
            }
            break;
        }
        let Some(id) = self.discover.clone() else {
            return Some(message);
        };
        if !answers(&message, &id) {
            return Some(message);
        }
        self.discover = None;
        Some(match message {
            JsonRpcMessage::Response(response) => match response.result {
                ServerResult::DiscoverResult(_) => JsonRpcMessage::Response(response),
                _ => JsonRpcMessage::Error(JsonRpcError {
                    jsonrpc: JsonRpcVersion2_0,
                    id: Some(id),
                    error: ErrorData::new(
                        ErrorCode::METHOD_NOT_FOUND,
                        "the server answered server/discover with something else: it \
                         speaks an older protocol",
                        None,
                    ),
                }),
            },
            other => other,
        })
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_matches_its_request_as_rmcp_matches_them() {
        let asked = NumberOrString::Number(0);
        assert!(same_id(&asked, &NumberOrString::Number(0)));
        assert!(same_id(&asked, &NumberOrString::String("0".into())));
        assert!(!same_id(&asked, &NumberOrString::String("1".into())));
        assert!(!same_id(&asked, &NumberOrString::Number(1)));
        let error = |id: Option<RequestId>| -> RxJsonRpcMessage<RoleClient> {
            JsonRpcMessage::Error(JsonRpcError {
                jsonrpc: JsonRpcVersion2_0,
                id,
                error: ErrorData::new(ErrorCode::METHOD_NOT_FOUND, "no", None),
            })
        };
        // An error without an id answers the one request in flight.
        assert!(answers(&error(None), &asked));
        assert!(answers(&error(Some(NumberOrString::Number(0))), &asked));
        assert!(!answers(&error(Some(NumberOrString::Number(1))), &asked));
    }

    #[test]
    fn versions_before_2026_07_28_have_the_handshake() {
        assert!(is_legacy("2025-11-25"));
        assert!(is_legacy("2025-06-18"));
        assert!(!is_legacy("2026-07-28"));
    }
}
