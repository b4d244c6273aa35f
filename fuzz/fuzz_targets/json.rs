//! AFL target: a JSON test file through the whole loader (`prill_fuzz::spec::json`).

fn main() {
    afl::fuzz!(|data: &[u8]| prill_fuzz::spec::json(data));
}
