//! AFL target: a HOCON test file through the whole loader (`assay_fuzz::spec::hocon`).

fn main() {
    afl::fuzz!(|data: &[u8]| assay_fuzz::spec::hocon(data));
}
