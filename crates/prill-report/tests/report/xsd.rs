//! The JUnit report against the JUnit schema Jenkins validates with (`junit-10.xsd`,
//! vendored under `tests/data/`), checked by `xmllint --schema` (Debian's
//! libxml2-utils).
//!
//! The schema lacks three things the common consumers read, which the report writes;
//! they are added here, each by itself, and everything else must be as the schema says:
//! `file` and `line` on `<testcase>`, `<properties>` in a `<testcase>`, and `skipped` on
//! `<testsuites>`.
//!
//! Needs `xmllint`, so the tests are built ignored unless `PRILL_XSD_TESTS=1` (see
//! `build.rs`); `.ci/run` installs it and sets the variable. Run with the variable set
//! (or `--include-ignored`) and no `xmllint`, they fail.

use std::path::{Path, PathBuf};
use std::process::Command;

use prill_report::{Junit, Output};

use crate::fixtures::{Capture, feed, run};

/// Where each addition goes: the text of the schema it follows, and what is added
/// after it.
const ADDITIONS: [(&str, &str); 3] = [
    (
        r#"<xs:attribute name="classname" type="xs:string"/>"#,
        r#"<xs:attribute name="file" type="xs:string"/><xs:attribute name="line" type="xs:positiveInteger"/>"#,
    ),
    (
        r#"<xs:choice minOccurs="0" maxOccurs="unbounded">
                    <xs:element ref="skipped"/>"#,
        r#"<xs:element ref="properties"/>"#,
    ),
    (
        // The last attribute of <testsuites> (<testsuite>'s is `use="required"`).
        r#"<xs:attribute name="errors" type="xs:string" />"#,
        r#"<xs:attribute name="skipped" type="xs:string"/>"#,
    ),
];

/// The vendored schema with the report's three additions.
fn schema() -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/junit-10.xsd");
    let mut xsd = std::fs::read_to_string(&path).unwrap();
    for (anchor, addition) in ADDITIONS {
        assert_eq!(
            xsd.matches(anchor).count(),
            1,
            "the schema has changed: {anchor} is not there once"
        );
        xsd = xsd.replace(anchor, &format!("{anchor}{addition}"));
    }
    xsd
}

/// What `xmllint --schema` says of `xml`: whether it is valid, and its messages.
fn xmllint(dir: &Path, xml: &str) -> (bool, String) {
    let schema_path = dir.join("junit.xsd");
    let xml_path = dir.join("junit.xml");
    std::fs::write(&schema_path, schema()).unwrap();
    std::fs::write(&xml_path, xml).unwrap();
    let out = Command::new("xmllint")
        .arg("--noout")
        .arg("--schema")
        .arg(&schema_path)
        .arg(&xml_path)
        .output()
        .expect("xmllint runs (apt-get install libxml2-utils)");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

fn report(cancelled: bool) -> String {
    let capture = Capture::default();
    feed(
        &mut Junit::new(Output::writer(capture.clone())),
        &run(cancelled),
    );
    capture.text()
}

#[test]
#[cfg_attr(
    not(prill_xsd_tests),
    ignore = "needs xmllint: set PRILL_XSD_TESTS=1 with Debian's libxml2-utils installed (.ci/run does)"
)]
fn the_junit_report_is_valid_under_the_jenkins_schema() {
    let dir = tempfile::tempdir().unwrap();
    for cancelled in [false, true] {
        let xml = report(cancelled);
        // Every kind of case is in it, with the attributes the schema is extended for.
        for part in [
            "<failure",
            "<error",
            "<skipped",
            "<system-out>",
            "file=\"",
            "line=\"",
        ] {
            assert!(xml.contains(part), "{part} is missing from {xml}");
        }
        let (valid, messages) = xmllint(dir.path(), &xml);
        assert!(valid, "the report is invalid:\n{messages}\n{xml}");
    }
}

#[test]
#[cfg_attr(
    not(prill_xsd_tests),
    ignore = "needs xmllint: set PRILL_XSD_TESTS=1 with Debian's libxml2-utils installed (.ci/run does)"
)]
fn the_schema_check_rejects_what_the_schema_does_not_allow() {
    let dir = tempfile::tempdir().unwrap();
    let xml = report(false);
    for (what, broken) in [
        (
            "an attribute the schema does not know",
            xml.replacen("<testcase ", "<testcase colour=\"red\" ", 1),
        ),
        (
            "a line that is not a number",
            xml.replacen(" line=\"", " line=\"x", 1),
        ),
        (
            "a case without a name",
            xml.replacen("<testcase name=", "<testcase label=", 1),
        ),
        (
            "an element the schema does not know",
            xml.replacen("<failure ", "<failed ", 1)
                .replacen("</failure>", "</failed>", 1),
        ),
    ] {
        assert_ne!(broken, xml, "{what}: nothing was changed");
        let (valid, messages) = xmllint(dir.path(), &broken);
        assert!(!valid, "{what} passed the schema check: {messages}");
    }
}
