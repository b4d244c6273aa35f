//! AFL target: a YAML test file through the whole loader (`assay_fuzz::spec::yaml`).

fn main() {
    afl::fuzz!(|data: &[u8]| assay_fuzz::spec::yaml(data));
}
