#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(raw) = queen_frames::decompress_segment(data, 1 << 20) {
        assert!(raw.len() <= 1 << 20);
    }
});
