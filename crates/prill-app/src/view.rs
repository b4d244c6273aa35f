//! `prill view`'s pages over the history: the kept runs, one run's report, one case
//! across runs, and two runs compared, linked to each other
//! ([`prill_history::view::Route`]). Each page is made when asked for, from the files
//! as they are then, so a run that ends while the viewer is open shows on the next
//! load. A run is named only by its id in the history, never by a path.
//!
//! ```
//! use prill_app::{Overrides, Settings, view::Viewer};
//!
//! let dir = tempfile::tempdir()?;
//! let settings = Settings::load_from(dir.path(), None, prill_spec::Env::default(), Overrides::default())?;
//! let viewer = Viewer::new(settings);
//! let (status, page) = viewer.page("/", None);
//! assert_eq!(status, 200);
//! assert!(page.contains("No run is kept"));
//! assert_eq!(viewer.page("/run/nothing-like-it", None).0, 404);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use prill_history::compare::{CompareError, compare};
use prill_history::view::{self, Route};
use prill_report::html::{CompareSection, Links, render_linked};

use crate::compare::RunQuery;
use crate::settings::Settings;

/// The pages of `prill view`, made from the history of one project.
#[derive(Debug)]
pub struct Viewer {
    settings: Settings,
}

impl Viewer {
    /// The pages of the history `settings` name (`[history] dir`).
    pub fn new(settings: Settings) -> Viewer {
        Viewer { settings }
    }

    /// The page at `path` with `query` (both percent-encoded, as requested): an http
    /// status and an HTML document.
    pub fn page(&self, path: &str, query: Option<&str>) -> (u16, String) {
        match Route::parse(path, query) {
            Route::Runs => self.runs(),
            Route::Run(id) => self.run(&id),
            Route::Case(id) => self.case(&id),
            Route::Compare { base, head } => self.compare(base, head),
            Route::NotFound(path) => (404, view::not_found_page(&format!("Nothing is at {path}."))),
        }
    }

    fn runs(&self) -> (u16, String) {
        let rows = match self.settings.history().and_then(|h| h.runs()) {
            Ok(rows) => rows,
            Err(e) => return (500, view::not_found_page(&e.to_string())),
        };
        let empty = format!(
            "No run is kept in {} yet; every `prill run` adds one.",
            self.settings.runs_dir().display()
        );
        (200, view::runs_page(&rows, &empty))
    }

    fn run(&self, id: &str) -> (u16, String) {
        let side = match self.settings.kept_run(id) {
            Ok(side) => side,
            Err(e) => return missing(&e),
        };
        let mut links = view::site_links();
        let id = side.info.as_ref().map_or(id, |i| i.id.as_str());
        if let Ok((base, _)) = self.settings.compare_kept(&RunQuery {
            base: None,
            head: Some(id.to_owned()),
            base_branch: None,
        }) && let Some(base) = base.info
        {
            links.nav.push((
                "Compare with the run before".to_owned(),
                Route::Compare {
                    base: Some(base.id),
                    head: Some(id.to_owned()),
                }
                .href(),
            ));
        }
        let page = render_linked(
            &side.units,
            side.summary.as_ref(),
            side.info.as_ref(),
            None,
            &links,
        );
        (200, page)
    }

    fn case(&self, id: &str) -> (u16, String) {
        match self.settings.history().and_then(|h| h.case_history(id)) {
            Ok(rows) if rows.is_empty() => (
                404,
                view::not_found_page(&format!("No kept run has the case `{id}`.")),
            ),
            Ok(rows) => (200, view::case_page(&rows)),
            Err(e) => (500, view::not_found_page(&e.to_string())),
        }
    }

    fn compare(&self, base: Option<String>, head: Option<String>) -> (u16, String) {
        let query = RunQuery {
            base,
            head,
            base_branch: None,
        };
        let (base, head) = match self.settings.compare_kept(&query) {
            Ok(sides) => sides,
            Err(e) => return missing(&e),
        };
        let comparison = compare(&base, &head, &self.settings.compare_thresholds());
        let section = CompareSection::from(&comparison);
        let mut links: Links = view::site_links();
        for (text, side) in [("Base run", &base), ("Head run", &head)] {
            if let Some(info) = &side.info {
                links
                    .nav
                    .push((text.to_owned(), Route::Run(info.id.clone()).href()));
            }
        }
        let page = render_linked(
            &head.units,
            head.summary.as_ref(),
            head.info.as_ref(),
            Some(&section),
            &links,
        );
        (200, page)
    }
}

/// The page for a run that is not there (404) or cannot be read (500).
fn missing(error: &CompareError) -> (u16, String) {
    let status = match error {
        CompareError::NotFound { .. }
        | CompareError::Ambiguous { .. }
        | CompareError::TooFew { .. } => 404,
        _ => 500,
    };
    (status, view::not_found_page(&error.to_string()))
}

#[cfg(feature = "demo")]
impl prill_demo::Pages for Viewer {
    fn page(&self, path: &str, query: Option<&str>) -> prill_demo::Page {
        let (status, body) = Viewer::page(self, path, query);
        prill_demo::Page::html(status, body)
    }
}
