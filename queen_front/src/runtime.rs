//! Threads with a runtime of their own: the event-loop threads and the
//! fusion lanes.

/// A thread named `name` running the future `make` gives on a runtime of
/// its own until it ends.
pub fn runtime_thread<F>(
    name: String,
    make: impl FnOnce() -> F + Send + 'static,
) -> std::io::Result<std::thread::JoinHandle<()>>
where
    F: std::future::Future<Output = ()>,
{
    std::thread::Builder::new().name(name).spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime");
        runtime.block_on(make());
    })
}
