//! AFL target: a YAML test file through the whole loader (`prill_fuzz::spec::yaml`).

fn main() {
    afl::fuzz!(|data: &[u8]| prill_fuzz::spec::yaml(data));
}
