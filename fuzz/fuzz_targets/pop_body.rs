#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(answer) = queen_frames::pop_body::decode_pop_answer(data) {
        // What decodes encodes back to the same bytes.
        let again = queen_frames::pop_body::encode_pop_answer(&answer).unwrap();
        if data[4] == 1 {
            assert_eq!(again, data);
        }
    }
});
