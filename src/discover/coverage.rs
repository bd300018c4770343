//! What a scan could not render, and why: the coverage a report ends with.
//!
//! A GitOps repository deploys more than kivi-lint can always build: remote bases and charts
//! with the network off, chart dependencies nobody vendored, charts that need values,
//! `${VAR}` templates filled in at deploy time. None of those is a configuration problem, so
//! none is an input error (a CI job red for such reasons is removed, not fixed); none is
//! silent either. Each is one located note, counted by reason, and `--strict` makes them
//! errors for teams that want every source verified.

use serde::{Deserialize, Serialize};

use crate::diagnostics::{Diagnostic, Diagnostics};
use crate::source::Span;

/// Why a source was not rendered.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Limit {
    /// A remote kustomize base or resource, or a remote chart or chart dependency, while the
    /// network is off.
    NetworkOff,
    /// A chart whose templates `fail` or `required` without values the repository gives.
    NeedsValues,
    /// A document with `${VAR}` placeholders that nothing in the repository fills in.
    Placeholder,
    /// A kustomize exec or function plugin, or `helmCharts`: kivi-lint never runs plugins.
    Plugin,
    /// A remote source of a kind kivi-lint does not fetch, with the network allowed: a base
    /// nested in a fetched base, a repository named by no URL (a template's placeholder), a
    /// `semver` Git reference.
    NotFetched,
    /// Applications of an ApplicationSet generator or template kivi-lint cannot expand from
    /// the repository (the cluster list, another service, Go template functions).
    Generator,
}

impl Limit {
    /// The reason in the coverage line: "not rendered: 3 (remote source, network off)".
    pub fn reason(self) -> &'static str {
        match self {
            Limit::NetworkOff => "remote source, network off",
            Limit::NeedsValues => "chart needs values",
            Limit::Placeholder => "`${VAR}` templates",
            Limit::Plugin => "kustomize plugins",
            Limit::NotFetched => "remote source kivi-lint does not fetch",
            Limit::Generator => "ApplicationSet generators kivi-lint cannot expand",
        }
    }
}

/// One source left out.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct NotRendered {
    pub limit: Limit,
    /// What was left out, as the report names it: a kustomization's or chart's directory, a
    /// file, a HelmRelease.
    pub source: String,
    /// One sentence: what could not be had.
    pub detail: String,
}

/// How a remote source's detail ends while the network is off.
pub const NETWORK_OFF: &str = "needs the network, which is off";

/// Record `what` as not rendered, with a located note (an error under `--strict`). With the
/// network allowed (`network`), a remote source left out is one kivi-lint does not fetch.
pub fn record(
    not_rendered: &mut Vec<NotRendered>,
    diags: &mut Diagnostics,
    (strict, network): (bool, bool),
    span: Span,
    mut what: NotRendered,
    help: &str,
) {
    if network && what.limit == Limit::NetworkOff {
        what.limit = Limit::NotFetched;
        const NOT_FETCHED: &str =
            "is not fetched: kivi-lint fetches Helm charts, Git repositories and remote files over https, nothing else";
        what.detail = what
            .detail
            .replace(&format!("fetching it {NETWORK_OFF}"), &format!("it {NOT_FETCHED}"))
            .replace(NETWORK_OFF, NOT_FETCHED);
    }
    // Two deployers of one chart meet its limit once.
    if not_rendered.contains(&what) {
        return;
    }
    let message = format!("{} is not verified: {}", what.source, what.detail);
    let diagnostic = if strict {
        Diagnostic::error(span, message)
    } else {
        Diagnostic::note(span, message)
    };
    diags.push(diagnostic.with_help(help.to_string()));
    not_rendered.push(what);
}

/// `(reason, count)` of every limit met, in a stable order.
pub fn by_reason(not_rendered: &[NotRendered]) -> Vec<(Limit, usize)> {
    let mut counts: std::collections::BTreeMap<Limit, usize> = std::collections::BTreeMap::new();
    for n in not_rendered {
        *counts.entry(n.limit).or_default() += 1;
    }
    counts.into_iter().collect()
}

/// "not rendered: 8 (remote source, network off), 2 (`${VAR}` templates)", or `None`.
pub fn line(not_rendered: &[NotRendered]) -> Option<String> {
    let parts: Vec<String> = by_reason(not_rendered)
        .into_iter()
        .map(|(limit, n)| format!("{n} ({})", limit.reason()))
        .collect();
    (!parts.is_empty()).then(|| format!("not rendered: {}", parts.join(", ")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(limit: Limit) -> NotRendered {
        NotRendered {
            limit,
            source: "x".into(),
            detail: "y".into(),
        }
    }

    #[test]
    fn the_line_counts_by_reason_in_a_stable_order() {
        assert_eq!(line(&[]), None);
        let all = [
            item(Limit::Placeholder),
            item(Limit::NetworkOff),
            item(Limit::Placeholder),
        ];
        assert_eq!(
            line(&all).unwrap(),
            "not rendered: 1 (remote source, network off), 2 (`${VAR}` templates)"
        );
    }

    #[test]
    fn with_the_network_on_a_remote_source_is_one_kivi_lint_does_not_fetch() {
        let mut diags = Diagnostics::default();
        let mut out = Vec::new();
        let span = Span::point(crate::source::FileId(0), crate::source::Location::START);
        let remote = NotRendered {
            limit: Limit::NetworkOff,
            source: "kustomization k".into(),
            detail: format!("the remote resource `x` {NETWORK_OFF}"),
        };
        record(&mut out, &mut diags, (false, true), span, remote, "h");
        assert_eq!(out[0].limit, Limit::NotFetched);
        assert!(!out[0].detail.contains("which is off"), "{}", out[0].detail);
    }

    #[test]
    fn strict_makes_it_an_error() {
        let mut diags = Diagnostics::default();
        let mut out = Vec::new();
        let span = Span::point(crate::source::FileId(0), crate::source::Location::START);
        record(&mut out, &mut diags, (true, false), span, item(Limit::NetworkOff), "h");
        record(
            &mut out,
            &mut diags,
            (false, false),
            span,
            item(Limit::Placeholder),
            "h",
        );
        // The same limit of the same source, met again (a chart and its Application): once.
        record(
            &mut out,
            &mut diags,
            (false, false),
            span,
            item(Limit::Placeholder),
            "h",
        );
        let severities: Vec<_> = diags.iter().map(|d| d.severity).collect();
        assert_eq!(
            severities,
            vec![crate::diagnostics::Severity::Error, crate::diagnostics::Severity::Note]
        );
        assert_eq!(out.len(), 2);
    }
}
