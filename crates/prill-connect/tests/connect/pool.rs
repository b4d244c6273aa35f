//! The HTTP client's connections: a pooled connection is reused, a stale one replaced,
//! a request the server may have read is never sent again, and the proxy the
//! environment names (`HTTPS_PROXY`) is gone through. Against servers on 127.0.0.1
//! that keep connections open (the scripted server of `server.rs` closes each one), and
//! one that closes each right after answering, which no chat reaches twice.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use prill_connect::{
    AgentRequest, Connector, ErrorKind, HttpOptions, NeuroSanHttp, RetryPolicy, TlsOptions, Url,
};
use prill_testkit::start_demo;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

use crate::server::read_request;

/// How a [`KeepAlive`] server answers one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Then {
    /// `200` with the body, and the connection kept open for the next request.
    Answer,
    /// `200` with the body, then the connection closed (with no `Connection: close`:
    /// the client learns it only from the close itself).
    AnswerAndClose,
    /// The request read whole, then the connection reset with no answer: the server
    /// may have acted on it.
    Reset,
}

/// A server that keeps each connection open and answers its requests one after
/// another, by `(connection, request on it)`, both counted from 0.
struct KeepAlive {
    base: Url,
    connections: Arc<AtomicUsize>,
    requests: Arc<Mutex<Vec<(usize, String)>>>,
    task: JoinHandle<()>,
}

impl Drop for KeepAlive {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// The body of every answer: a list of agents, and for a chat a whole answer (its final
/// message), so that either reader takes it.
const BODY: &str = concat!(
    r#"{"agents": [], "response": {"type": "AGENT_FRAMEWORK", "text": "ok", "#,
    r#""chat_context": {"chat_histories": [{"messages": [{"type": "AI", "text": "ok"}]}]}}}"#,
    "\n"
);

impl KeepAlive {
    async fn start(then: impl Fn(usize, usize) -> Then + Send + Sync + 'static) -> KeepAlive {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = Url::parse(&format!("http://{}", listener.local_addr().unwrap())).unwrap();
        let connections = Arc::new(AtomicUsize::new(0));
        let requests = Arc::new(Mutex::new(Vec::new()));
        let then = Arc::new(then);
        let (counted, recorded) = (Arc::clone(&connections), Arc::clone(&requests));
        let task = tokio::spawn(async move {
            loop {
                let Ok((socket, _)) = listener.accept().await else {
                    return;
                };
                let connection = counted.fetch_add(1, Ordering::SeqCst);
                let (then, recorded) = (Arc::clone(&then), Arc::clone(&recorded));
                tokio::spawn(async move {
                    serve(socket, connection, &*then, &recorded).await;
                });
            }
        });
        KeepAlive {
            base,
            connections,
            requests,
            task,
        }
    }

    fn connections(&self) -> usize {
        self.connections.load(Ordering::SeqCst)
    }

    /// Every request so far: its connection and its method.
    fn requests(&self) -> Vec<(usize, String)> {
        self.requests.lock().unwrap().clone()
    }
}

async fn serve(
    mut socket: TcpStream,
    connection: usize,
    then: &(dyn Fn(usize, usize) -> Then + Send + Sync),
    recorded: &Mutex<Vec<(usize, String)>>,
) {
    for n in 0.. {
        let Some(request) = read_request(&mut socket).await else {
            return;
        };
        recorded
            .lock()
            .unwrap()
            .push((connection, request.method.clone()));
        let what = then(connection, n);
        if what == Then::Reset {
            let _ = socket.set_zero_linger();
            return;
        }
        let answer = format!(
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{BODY}",
            BODY.len()
        );
        if socket.write_all(answer.as_bytes()).await.is_err() || what == Then::AnswerAndClose {
            return;
        }
    }
}

/// One attempt only when a retry is not what is tested, quick ones when it is.
fn connector(server: &KeepAlive) -> NeuroSanHttp {
    let options = HttpOptions {
        retry: RetryPolicy {
            max_attempts: 3,
            base_delay: Duration::from_millis(10),
            max_delay: Duration::from_millis(50),
        },
        ..HttpOptions::default()
    };
    NeuroSanHttp::new(server.base.clone(), &options).unwrap()
}

/// Long enough for the client to put a connection back in its pool, or to see that
/// the server closed it.
const SETTLE: Duration = Duration::from_millis(200);

#[tokio::test]
async fn a_connection_whose_answer_was_read_whole_is_reused() {
    let server = KeepAlive::start(|_, _| Then::Answer).await;
    let connector = connector(&server);
    for _ in 0..3 {
        connector.list_agents().await.unwrap();
        tokio::time::sleep(SETTLE).await;
    }
    assert_eq!(server.connections(), 1, "{:?}", server.requests());
}

#[tokio::test]
async fn a_post_the_server_may_have_read_is_never_sent_again_on_a_reused_connection() {
    // The first request leaves its connection in the pool; the chat goes out on it, and
    // the server reads the chat and resets the connection. The agent may be running it:
    // sending it again, on this connection or another, could run it twice.
    let server = KeepAlive::start(|_, n| if n == 0 { Then::Answer } else { Then::Reset }).await;
    let connector = connector(&server);
    connector.list_agents().await.unwrap();
    tokio::time::sleep(SETTLE).await;
    let e = connector
        .open("math_guy")
        .await
        .unwrap()
        .send(&AgentRequest::new("x"))
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Protocol, "{e}");
    let requests = server.requests();
    assert_eq!(
        requests,
        [(0, "GET".to_owned()), (0, "POST".to_owned())],
        "the chat was not sent once, on the reused connection"
    );
    tokio::time::sleep(SETTLE).await;
    assert_eq!(server.requests().len(), 2, "the chat was sent again later");
}

#[tokio::test]
async fn a_pooled_connection_the_server_closed_is_replaced() {
    // The server closes each connection after its first answer, without saying so in
    // the answer: the next request must go out on a new connection, and succeed.
    let server = KeepAlive::start(|_, _| Then::AnswerAndClose).await;
    let connector = connector(&server);
    connector.list_agents().await.unwrap();
    tokio::time::sleep(SETTLE).await;
    let response = connector
        .open("math_guy")
        .await
        .unwrap()
        .send(&AgentRequest::new("x"))
        .await
        .unwrap();
    assert_eq!(response.text.as_deref(), Some("ok"));
    assert_eq!(
        server.requests(),
        [(0, "GET".to_owned()), (1, "POST".to_owned())],
        "each request once, the second on a new connection"
    );
}

#[tokio::test]
async fn a_server_that_closes_after_each_answer_never_gets_a_request_twice() {
    // The race of a server that closes a kept-alive connection right after answering:
    // the next chat may go out on the connection before the client sees the close. Such
    // a chat either succeeds, on a new connection, or errors; none reaches the server
    // twice, since a chat written to a connection that then broke is never sent again.
    let server = KeepAlive::start(|_, _| Then::AnswerAndClose).await;
    let connector = connector(&server);
    let mut answered = 0;
    for n in 0..20 {
        match connector
            .open("math_guy")
            .await
            .unwrap()
            .send(&AgentRequest::new(format!("chat {n}")))
            .await
        {
            Ok(response) => {
                assert_eq!(response.text.as_deref(), Some("ok"));
                answered += 1;
            }
            Err(e) => assert!(
                matches!(e.kind(), ErrorKind::Protocol | ErrorKind::Unreachable),
                "{e}"
            ),
        }
    }
    tokio::time::sleep(SETTLE).await;
    let requests = server.requests();
    assert!(requests.len() <= 20, "a chat was sent twice: {requests:?}");
    assert!(requests.len() >= answered, "{requests:?}");
    // Each connection carried at most one chat the server read.
    let mut per_connection = std::collections::HashMap::new();
    for (connection, _) in &requests {
        *per_connection.entry(*connection).or_insert(0) += 1;
    }
    assert!(per_connection.values().all(|n| *n == 1), "{requests:?}");
}

/// A CONNECT proxy on 127.0.0.1: each tunnel's target is recorded, then bytes are
/// copied both ways.
async fn connect_proxy() -> (SocketAddr, Arc<Mutex<Vec<String>>>, JoinHandle<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let targets = Arc::new(Mutex::new(Vec::new()));
    let recorded = Arc::clone(&targets);
    let task = tokio::spawn(async move {
        loop {
            let Ok((mut client, _)) = listener.accept().await else {
                return;
            };
            let recorded = Arc::clone(&recorded);
            tokio::spawn(async move {
                let mut head = Vec::new();
                let mut byte = [0u8; 1];
                while !head.ends_with(b"\r\n\r\n") {
                    if client.read(&mut byte).await.unwrap_or(0) == 0 {
                        return;
                    }
                    head.push(byte[0]);
                }
                let head = String::from_utf8_lossy(&head).into_owned();
                let mut first = head.lines().next().unwrap_or_default().split(' ');
                if first.next() != Some("CONNECT") {
                    let _ = client.write_all(b"HTTP/1.1 405 Only CONNECT\r\n\r\n").await;
                    return;
                }
                let target = first.next().unwrap_or_default().to_owned();
                recorded.lock().unwrap().push(target.clone());
                let Ok(mut upstream) = TcpStream::connect(&target).await else {
                    let _ = client
                        .write_all(b"HTTP/1.1 502 No way through\r\n\r\n")
                        .await;
                    return;
                };
                let _ = client
                    .write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")
                    .await;
                let _ = tokio::io::copy_bidirectional(&mut client, &mut upstream).await;
            });
        }
    });
    (addr, targets, task)
}

/// The variables the child reads: the demo server's http url, and its certificate.
const DEMO_URL: &str = "PRILL_TEST_PROXY_DEMO_URL";
const DEMO_CERT: &str = "PRILL_TEST_PROXY_DEMO_CERT";

#[tokio::test]
async fn https_goes_through_the_proxy_https_proxy_names() {
    // The proxy variables are read from the process's environment, which a test
    // cannot change safely while others run: the check runs in a child process of this
    // test binary, with `HTTPS_PROXY` set to a CONNECT proxy served here.
    let demo = start_demo().await;
    let (proxy, targets, _task) = connect_proxy().await;
    let mut child = tokio::process::Command::new(std::env::current_exe().unwrap());
    child
        .args([
            "pool::through_the_proxy_in_a_child",
            "--exact",
            "--ignored",
            "--nocapture",
        ])
        .env("HTTPS_PROXY", format!("http://{proxy}"))
        .env(DEMO_URL, demo.http_url())
        .env(DEMO_CERT, demo.cert_pem());
    for name in [
        "NO_PROXY",
        "no_proxy",
        "https_proxy",
        "HTTP_PROXY",
        "http_proxy",
        "ALL_PROXY",
        "all_proxy",
    ] {
        child.env_remove(name);
    }
    let output = child.output().await.unwrap();
    let shown = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(output.status.success(), "the child failed:\n{shown}");
    assert!(
        shown.contains("1 passed"),
        "the child ran no test:\n{shown}"
    );
    assert_eq!(
        *targets.lock().unwrap(),
        [demo.addr().to_string()],
        "the request did not go through the proxy once"
    );
}

#[tokio::test]
#[ignore = "run by https_goes_through_the_proxy_https_proxy_names, in a process of its own"]
async fn through_the_proxy_in_a_child() {
    let url = std::env::var(DEMO_URL).expect("run by the test that sets HTTPS_PROXY");
    let cert = std::env::var(DEMO_CERT).expect("run by the test that sets HTTPS_PROXY");
    let options = HttpOptions {
        tls: TlsOptions::default().with_ca_pem(cert),
        ..HttpOptions::default()
    };
    let connector = NeuroSanHttp::https(&Url::parse(&url).unwrap(), &options).unwrap();
    let agents = connector.list_agents().await.unwrap();
    assert!(!agents.is_empty());
}
