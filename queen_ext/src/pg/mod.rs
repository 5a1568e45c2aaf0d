//! PostgreSQL underneath everything: SPI with the per-backend plan cache,
//! errors with their SQLSTATEs, the settings, time, and shared memory.

pub mod errors;
pub mod kept;
pub mod settings;
pub mod shmem;
pub mod spi;
pub mod subxact;
pub mod time;
