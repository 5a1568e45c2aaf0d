#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = queen_frames::push_body::decode_push_body(data);
    let _ = queen_frames::push_body::decode_txn_body(data);
});
