//! AFL target: a stream body through its decoder (`prill_fuzz::connect::jsonl`).

fn main() {
    afl::fuzz!(|data: &[u8]| prill_fuzz::connect::jsonl(data));
}
