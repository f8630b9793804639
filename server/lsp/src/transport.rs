//! The byte streams between the client and tower-lsp-server's `Server`:
//! frames are read here ([`framing`]) and only messages that decode are
//! passed on, through an in-memory pipe; the server's output comes back
//! through another pipe, so that the error replies to rejected frames go
//! out whole between its own messages.

use std::pin::pin;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, DuplexStream};
use tokio::sync::mpsc;

use crate::framing::{self, Frame, FrameReader, FrameSplitter, Split};

/// The size of each in-memory pipe and of each read: a message larger than
/// this streams through in pieces.
const CHUNK: usize = 64 * 1024;

/// Rejections not yet written out; reading waits while this many are.
const PENDING_REPLIES: usize = 64;

/// Runs the server that `serve` makes from the two in-memory pipes' ends
/// (tower-lsp-server's `Server::serve` reading the first and writing the
/// second), with the pumps between it and the client's streams. Returns
/// once the server has stopped and everything it wrote went out; reading
/// from `input` stops then, even if the client keeps it open.
pub(crate) async fn serve_through<I, O, S, F>(input: I, output: O, serve: S)
where
    I: AsyncRead + Unpin,
    O: AsyncWrite,
    S: FnOnce(DuplexStream, DuplexStream) -> F,
    F: Future<Output = ()>,
{
    let (server_input, input_end) = tokio::io::duplex(CHUNK);
    let (server_output, output_end) = tokio::io::duplex(CHUNK);
    let (reply_sender, reply_receiver) = mpsc::channel(PENDING_REPLIES);
    let server = serve(server_input, server_output);
    let read = async {
        read_client(input, input_end, reply_sender).await;
        // Past the end of the input there is nothing to wait for but the
        // server, which sees the end of its own input now.
        std::future::pending::<()>().await;
    };
    let serve_and_write = async {
        tokio::join!(server, write_client(output_end, reply_receiver, output));
    };
    tokio::select! {
        () = serve_and_write => {}
        () = read => {}
    }
}

/// Reads frames from the client until its stream ends: messages go to the
/// server, rejections (with the reason logged) to the reply queue.
async fn read_client<I: AsyncRead + Unpin>(
    mut input: I,
    mut to_server: DuplexStream,
    replies: mpsc::Sender<Vec<u8>>,
) {
    let mut reader = FrameReader::default();
    let mut chunk = vec![0; CHUNK];
    loop {
        let read = match input.read(&mut chunk).await {
            Ok(0) => break,
            Ok(read) => read,
            Err(err) if err.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(err) => {
                tracing::error!("cannot read from the client: {err}");
                break;
            }
        };
        reader.push(&chunk[..read]);
        while let Some(frame) = reader.next_frame() {
            match frame {
                Frame::Message(body) => {
                    // The server stopped reading (after `exit`): nothing
                    // more is for it.
                    if to_server.write_all(&framing::encode(&body)).await.is_err() {
                        return;
                    }
                }
                Frame::Rejected(rejection) => {
                    tracing::warn!(
                        "rejected a message from the client: {} ({})",
                        rejection.message,
                        rejection.code
                    );
                    if replies.send(rejection.response_body()).await.is_err() {
                        return;
                    }
                }
            }
        }
    }
    if reader.has_partial() {
        tracing::warn!("the client's stream ended inside a message");
    }
}

/// Writes to the client what the server writes, frame by frame, and the
/// replies to rejected frames between them, until the server's output
/// ends. Once the client's stream is broken, output is read and dropped,
/// so that the server never blocks on a full pipe.
async fn write_client<O: AsyncWrite>(
    mut from_server: DuplexStream,
    mut replies: mpsc::Receiver<Vec<u8>>,
    output: O,
) {
    let mut output = pin!(output);
    let mut splitter = FrameSplitter::default();
    let mut chunk = vec![0; CHUNK];
    let mut replies_open = true;
    let mut broken = false;
    loop {
        let mut bodies = Vec::new();
        tokio::select! {
            read = from_server.read(&mut chunk) => match read {
                Ok(0) | Err(_) => break,
                Ok(read) => {
                    splitter.push(&chunk[..read]);
                    while let Some(split) = splitter.next_split() {
                        match split {
                            Split::Body(body) => bodies.push(body),
                            // The framework's own encoder wrote this.
                            Split::Garbage(why) => tracing::error!("bad frame from the server: {why}"),
                        }
                    }
                }
            },
            reply = replies.recv(), if replies_open => match reply {
                Some(body) => bodies.push(body),
                None => replies_open = false,
            },
        }
        if !broken {
            broken = write_frames(&mut output, &bodies).await;
        }
    }
    // Rejections answered before the end still go out.
    let mut bodies = Vec::new();
    while let Ok(body) = replies.try_recv() {
        bodies.push(body);
    }
    if !broken {
        write_frames(&mut output, &bodies).await;
    }
}

/// Writes `bodies` as frames and flushes; true when the stream is broken.
async fn write_frames<O: AsyncWrite>(
    output: &mut std::pin::Pin<&mut O>,
    bodies: &[Vec<u8>],
) -> bool {
    if bodies.is_empty() {
        return false;
    }
    for body in bodies {
        if let Err(err) = output.write_all(&framing::encode(body)).await {
            tracing::error!("cannot write to the client: {err}");
            return true;
        }
    }
    if let Err(err) = output.flush().await {
        tracing::error!("cannot write to the client: {err}");
        return true;
    }
    false
}
