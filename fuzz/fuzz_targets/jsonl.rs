//! AFL target: a stream body through its decoder (`assay_fuzz::connect::jsonl`).

fn main() {
    afl::fuzz!(|data: &[u8]| assay_fuzz::connect::jsonl(data));
}
