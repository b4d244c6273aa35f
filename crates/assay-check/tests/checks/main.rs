//! tmp
#[test]
fn dump() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/conformance/neuro-san");
    let mut stack = vec![root];
    let env = assay_spec::Env::from_pairs([("OPENAI_API_KEY", "sk-dummy")]);
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() { stack.push(p); continue; }
            if p.extension().is_none_or(|e| e != "hocon") { continue; }
            let l = assay_spec::load::load_file(&p, &env, assay_spec::Unrecognized::Error).unwrap().unwrap();
            for c in l.cases() { for s in &c.interactions { for k in &s.checks { println!("{:?}", k.kind); } } }
        }
    }
}
