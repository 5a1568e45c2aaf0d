#![no_main]
use libfuzzer_sys::fuzz_target;

// The first four bytes are the frame count the segment row would claim.
fuzz_target!(|data: &[u8]| {
    if data.len() < 4 {
        return;
    }
    let count = u32::from_le_bytes([data[0], data[1], data[2], data[3]]);
    if let Ok(frames) = queen_frames::parse_frames(&data[4..], count) {
        let total: usize = frames.iter().map(|f| f.encoded_len()).sum();
        assert_eq!(total, data.len() - 4);
    }
});
