//! The server: one acceptor hands the connections it takes, in turn, to the
//! event-loop threads, each with its own runtime and its own share of the
//! pool, and the request fusion lanes run on a thread of their own; on
//! SIGINT or SIGTERM it stops accepting and every thread finishes its
//! in-flight requests before the process ends.

use std::net::SocketAddr;

use crate::routes;
use crate::startup::{fail, Startup};
use crate::state::AppState;

/// How long the acceptor waits after a failed accept (out of file
/// descriptors and the like) before it tries again.
const ACCEPT_RETRY_DELAY: std::time::Duration = std::time::Duration::from_millis(50);

async fn shutdown_signal() {
    let ctrl_c = tokio::signal::ctrl_c();
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        .expect("SIGTERM handler");
    tokio::select! {
        _ = ctrl_c => {},
        _ = term.recv() => {},
    }
    tracing::info!("shutting down: finishing in-flight requests");
}

/// The connections one event-loop thread serves, handed to it by the
/// acceptor. A request and the database connection that answers it are
/// served on the same thread, so answering one wakes no other thread.
struct Handed {
    rx: tokio::sync::mpsc::UnboundedReceiver<std::net::TcpStream>,
    addr: SocketAddr,
}

impl axum::serve::Listener for Handed {
    type Io = tokio::net::TcpStream;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        loop {
            let Some(stream) = self.rx.recv().await else {
                // The acceptor has stopped: shutdown is under way.
                return std::future::pending().await;
            };
            let taken = tokio::net::TcpStream::from_std(stream)
                .and_then(|s| s.peer_addr().map(|peer| (s, peer)));
            match taken {
                Ok(taken) => return taken,
                Err(e) => tracing::warn!("a connection could not be taken over: {e}"),
            }
        }
    }

    fn local_addr(&self) -> std::io::Result<Self::Addr> {
        Ok(self.addr)
    }
}

/// One event-loop thread: its own runtime and its own share of the pool,
/// serving what the acceptor hands it until `stop` turns true.
fn serve_thread(
    n: usize,
    state: AppState,
    handed: Handed,
    mut stop: tokio::sync::watch::Receiver<bool>,
) -> std::io::Result<std::thread::JoinHandle<()>> {
    crate::runtime::runtime_thread(format!("queen-front-{n}"), move || async move {
        // The first thread reports the figures every thread counts.
        if let (0, Some(period)) = (n, state.config.metrics_report) {
            tokio::spawn(crate::report::run(
                state.pool.clone(),
                std::sync::Arc::clone(&state.config),
                std::sync::Arc::clone(&state.figures),
                period,
            ));
        }
        let app = routes::app(state).layer(tower_http::trace::TraceLayer::new_for_http());
        let stopped = async move {
            let _ = stop.wait_for(|s| *s).await;
        };
        if let Err(e) = axum::serve(handed, app)
            .with_graceful_shutdown(stopped)
            .await
        {
            tracing::error!("event-loop thread {n}: {e}");
        }
    })
}

/// Binds the configured address, starts the event-loop threads and accepts
/// until a shutdown signal; returns when every thread has finished. An
/// address that can not be bound, or a thread that can not start, fails
/// the start.
pub fn run(startup: Startup) {
    let config = &startup.config;
    let host = startup.bind_host();
    let addr = startup.address();
    let acceptor = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let threads = acceptor.block_on(async {
        let listener = tokio::net::TcpListener::bind((host.as_str(), config.port))
            .await
            .unwrap_or_else(|e| fail(format!("binding {addr}: {e}")));
        let local = listener
            .local_addr()
            .unwrap_or_else(|e| fail(format!("{addr}: {e}")));
        let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
        let mut hands = Vec::with_capacity(config.threads);
        let mut threads = Vec::with_capacity(config.threads);
        let (fusion, lanes_pool) = startup.fusion();
        if let Some(pool) = lanes_pool {
            let lanes = fusion.spawn(pool).expect("fusion is on");
            threads.push(lanes.unwrap_or_else(|e| fail(format!("starting the fusion lanes: {e}"))));
        }
        for (n, state) in startup.thread_states(&fusion).into_iter().enumerate() {
            let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
            let thread = serve_thread(n, state, Handed { rx, addr: local }, stop_rx.clone());
            threads.push(
                thread.unwrap_or_else(|e| fail(format!("starting event-loop thread {n}: {e}"))),
            );
            hands.push(tx);
        }
        // The lanes end once the last thread's clone is gone.
        drop(fusion);
        tracing::info!(addr = %local, threads = config.threads, "listening");
        let signal = shutdown_signal();
        tokio::pin!(signal);
        let mut next = 0usize;
        loop {
            tokio::select! {
                _ = &mut signal => break,
                accepted = listener.accept() => match accepted {
                    Ok((stream, _)) => {
                        // Answers go out as soon as they are written (no Nagle
                        // delay behind an unacknowledged segment).
                        if let Err(e) = stream.set_nodelay(true) {
                            tracing::warn!("TCP_NODELAY: {e}");
                        }
                        match stream.into_std() {
                            Ok(stream) => {
                                let _ = hands[next].send(stream);
                                next = (next + 1) % hands.len();
                            }
                            Err(e) => tracing::warn!("a connection could not be handed on: {e}"),
                        }
                    }
                    Err(e) => {
                        tracing::warn!("accept: {e}");
                        tokio::time::sleep(ACCEPT_RETRY_DELAY).await;
                    }
                },
            }
        }
        let _ = stop_tx.send(true);
        threads
    });
    for thread in threads {
        let _ = thread.join();
    }
}
