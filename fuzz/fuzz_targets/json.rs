//! AFL target: a JSON test file through the whole loader (`assay_fuzz::spec::json`).

fn main() {
    afl::fuzz!(|data: &[u8]| assay_fuzz::spec::json(data));
}
