//! A scripted HTTP/1.1 server on 127.0.0.1: each connection's request is recorded and
//! answered by a handler, byte for byte, so that tests can produce every fault a real
//! server might (a cut stream, a hang, a malformed line) without depending on one.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use prill_connect::Url;
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

/// One request as the server read it.
#[derive(Debug, Clone)]
pub(crate) struct Request {
    pub(crate) method: String,
    pub(crate) path: String,
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) body: Vec<u8>,
}

impl Request {
    /// A header's value, by case-insensitive name.
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The body as JSON.
    pub(crate) fn json(&self) -> Value {
        serde_json::from_slice(&self.body).expect("the request body is JSON")
    }
}

/// How to answer one request.
pub(crate) enum Reply {
    /// `200` with a chunked body made of these pieces, then a proper end.
    Stream(Vec<Vec<u8>>),
    /// A whole response: status, extra headers, body.
    Status(u16, Vec<(&'static str, String)>, Vec<u8>),
    /// `200` with these chunks, then the connection is cut without ending the body.
    Cut(Vec<Vec<u8>>),
    /// `200` with these chunks, then nothing more until the client goes away.
    Hang(Vec<Vec<u8>>),
    /// `200` with each chunk sent after its pause, then a proper end.
    Paced(Vec<(Duration, Vec<u8>)>),
    /// Nothing at all, not even a status line, until the client goes away.
    Silent,
    /// The connection is reset (RST) once the request has been read: the request may
    /// have been acted on, and no answer comes.
    Reset,
}

type Handler = dyn Fn(usize, &Request) -> Reply + Send + Sync;

/// The server; stops when dropped.
pub(crate) struct Server {
    pub(crate) base: Url,
    requests: Arc<Mutex<Vec<Request>>>,
    gone: mpsc::UnboundedReceiver<()>,
    task: JoinHandle<()>,
}

impl Drop for Server {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Server {
    /// Starts a server whose `handler` answers request number `n` (from 0).
    pub(crate) async fn start(
        handler: impl Fn(usize, &Request) -> Reply + Send + Sync + 'static,
    ) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let (gone_tx, gone) = mpsc::unbounded_channel();
        let handler: Arc<Handler> = Arc::new(handler);
        let recorded = requests.clone();
        let task = tokio::spawn(async move {
            loop {
                let Ok((socket, _)) = listener.accept().await else {
                    return;
                };
                let handler = handler.clone();
                let recorded = recorded.clone();
                let gone_tx = gone_tx.clone();
                tokio::spawn(async move {
                    serve(socket, handler, recorded, gone_tx).await;
                });
            }
        });
        Server {
            base: Url::parse(&format!("http://127.0.0.1:{port}")).unwrap(),
            requests,
            gone,
            task,
        }
    }

    /// Every request so far.
    pub(crate) fn requests(&self) -> Vec<Request> {
        self.requests.lock().unwrap().clone()
    }

    /// Waits until a client left a [`Reply::Hang`] or [`Reply::Silent`] connection (30s
    /// at most).
    pub(crate) async fn client_gone(&mut self) -> bool {
        tokio::time::timeout(Duration::from_secs(30), self.gone.recv())
            .await
            .is_ok_and(|r| r.is_some())
    }
}

async fn serve(
    mut socket: TcpStream,
    handler: Arc<Handler>,
    recorded: Arc<Mutex<Vec<Request>>>,
    gone: mpsc::UnboundedSender<()>,
) {
    let Some(request) = read_request(&mut socket).await else {
        return;
    };
    let number = {
        let mut all = recorded.lock().unwrap();
        all.push(request.clone());
        all.len() - 1
    };
    let reply = handler(number, &request);
    let head = |status: u16, extra: &[(&str, String)]| {
        let mut text = format!("HTTP/1.1 {status} X\r\nConnection: close\r\n");
        for (name, value) in extra {
            text.push_str(&format!("{name}: {value}\r\n"));
        }
        text
    };
    let stream_head = format!(
        "{}Content-Type: application/json-lines\r\nTransfer-Encoding: chunked\r\n\r\n",
        head(200, &[])
    );
    let chunk = |piece: &[u8]| {
        let mut bytes = format!("{:x}\r\n", piece.len()).into_bytes();
        bytes.extend_from_slice(piece);
        bytes.extend_from_slice(b"\r\n");
        bytes
    };
    let _ = match reply {
        Reply::Stream(pieces) => {
            let mut bytes = stream_head.into_bytes();
            for piece in pieces.iter().filter(|p| !p.is_empty()) {
                bytes.extend(chunk(piece));
            }
            bytes.extend_from_slice(b"0\r\n\r\n");
            socket.write_all(&bytes).await
        }
        Reply::Status(status, extra, body) => {
            let mut bytes = format!(
                "{}Content-Length: {}\r\n\r\n",
                head(status, &extra),
                body.len()
            )
            .into_bytes();
            bytes.extend(body);
            socket.write_all(&bytes).await
        }
        Reply::Cut(pieces) => {
            let mut bytes = stream_head.into_bytes();
            for piece in &pieces {
                bytes.extend(chunk(piece));
            }
            let _ = socket.write_all(&bytes).await;
            socket.shutdown().await
        }
        Reply::Hang(pieces) => {
            let mut bytes = stream_head.into_bytes();
            for piece in &pieces {
                bytes.extend(chunk(piece));
            }
            let _ = socket.write_all(&bytes).await;
            wait_until_gone(&mut socket).await;
            let _ = gone.send(());
            Ok(())
        }
        Reply::Paced(pieces) => {
            let _ = socket.write_all(stream_head.as_bytes()).await;
            for (pause, piece) in pieces.iter().filter(|(_, p)| !p.is_empty()) {
                tokio::time::sleep(*pause).await;
                if socket.write_all(&chunk(piece)).await.is_err() {
                    return;
                }
            }
            socket.write_all(b"0\r\n\r\n").await
        }
        Reply::Silent => {
            wait_until_gone(&mut socket).await;
            let _ = gone.send(());
            Ok(())
        }
        Reply::Reset => {
            // A zero linger makes the close a reset, as a crashed server's would be.
            let _ = socket.set_zero_linger();
            drop(socket);
            Ok(())
        }
    };
}

/// Reads and drops whatever the client sends until it closes the connection.
async fn wait_until_gone(socket: &mut TcpStream) {
    let mut sink = [0u8; 256];
    loop {
        match socket.read(&mut sink).await {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
    }
}

/// Reads a request head and a `Content-Length` body.
pub(crate) async fn read_request(socket: &mut TcpStream) -> Option<Request> {
    let mut data = Vec::new();
    let mut buf = [0u8; 4096];
    let head_end = loop {
        if let Some(at) = data.windows(4).position(|w| w == b"\r\n\r\n") {
            break at;
        }
        let n = socket.read(&mut buf).await.ok()?;
        if n == 0 {
            return None;
        }
        data.extend_from_slice(&buf[..n]);
    };
    let head = String::from_utf8_lossy(&data[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let mut first = lines.next()?.split(' ');
    let method = first.next()?.to_owned();
    let path = first.next()?.to_owned();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_owned(), v.trim().to_owned()))
        .collect();
    let length: usize = headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case("content-length"))
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let mut body = data[head_end + 4..].to_vec();
    while body.len() < length {
        let n = socket.read(&mut buf).await.ok()?;
        if n == 0 {
            return None;
        }
        body.extend_from_slice(&buf[..n]);
    }
    Some(Request {
        method,
        path,
        headers,
        body,
    })
}
