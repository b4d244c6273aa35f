//! AFL target: a HOCON test file through the whole loader (`prill_fuzz::spec::hocon`).

fn main() {
    afl::fuzz!(|data: &[u8]| prill_fuzz::spec::hocon(data));
}
