//! The run's secrets as cassettes and the model response cache blank them: the run's
//! one redaction, `prill_spec`'s [`Redactor`] (the same that blanks every report: keys
//! whole and in part, as a provider quotes a key it refused, and the values `${VAR}`
//! put into test files), each secret written as [`REDACTED`], so that a file reads the
//! same whichever variable held it and recordings made before still match.

use std::sync::Arc;

use prill_cassette::{Normalizer, REDACTED, Redact};
use prill_spec::redact::Redactor;

/// `secrets` as the redaction of a [`Normalizer`]; `None` when there is nothing to hide.
pub(crate) fn redaction(secrets: &Redactor) -> Option<Arc<dyn Redact>> {
    if secrets.is_empty() {
        return None;
    }
    Some(Arc::new(Blank(secrets.shown_as(REDACTED))))
}

/// A normalizer that blanks `secrets` (for [`Normalizer::redact_request`] and
/// [`Normalizer::redact_response`]; its volatile fields are the defaults).
pub(crate) fn blanking(secrets: &Redactor) -> Normalizer {
    match redaction(secrets) {
        Some(redaction) => Normalizer::default().with_redaction(redaction),
        None => Normalizer::default(),
    }
}

/// `run`'s secrets with those of one request (the keys its headers carry), when it has
/// any the run does not know already.
pub(crate) fn with_request(run: &Redactor, request: &Redactor) -> Option<Redactor> {
    if request
        .values()
        .all(|value| run.values().any(|known| known == value))
    {
        return None;
    }
    let mut all = run.clone();
    all.extend(request);
    Some(all)
}

/// A [`Redactor`] as a cassette's redaction.
struct Blank(Redactor);

impl Redact for Blank {
    fn redact(&self, text: &mut String) {
        self.0.in_place(text);
    }

    fn reach(&self) -> usize {
        self.0.values().map(str::len).max().unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_blanked_whole_and_in_part_as_redacted() {
        let mut run = Redactor::default();
        run.secret("${OPENAI_API_KEY}", "sk-proj-abcdefghijklmnopZx9Q");
        let blank = redaction(&run).unwrap();
        let mut text = "Incorrect API key provided: sk-proj-****...Zx9Q.".to_owned();
        blank.redact(&mut text);
        assert_eq!(
            text,
            "Incorrect API key provided: <redacted>****...<redacted>."
        );
        assert_eq!(blank.reach(), "sk-proj-abcdefghijklmnopZx9Q".len());
        assert!(redaction(&Redactor::default()).is_none());
        assert!(with_request(&run, &Redactor::default()).is_none());
        let mut same = Redactor::default();
        same.secret("<redacted>", "sk-proj-abcdefghijklmnopZx9Q");
        assert!(with_request(&run, &same).is_none());
        let mut other = Redactor::default();
        other.secret("<redacted>", "sk-other-abcdefghijklmnop");
        let all = with_request(&run, &other).unwrap();
        assert_eq!(all.values().count(), 2);
    }
}
