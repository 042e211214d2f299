//! Ranking for `memory_search`: memory files are cut into small passages (paragraphs, a new
//! one at each heading, at most [`MAX_PASSAGE_LINES`] lines), and passages are scored against
//! the query's words with a plain lexical score (term frequency weighted by how rare the term
//! is across all passages, scaled by how many of the query's words a passage covers, with a
//! bonus for the whole query as a phrase). Pure and deterministic: ties break by path, then line.

use std::collections::BTreeSet;

/// Longest passage, in lines; longer paragraphs are split.
pub(crate) const MAX_PASSAGE_LINES: usize = 12;

/// Words too common to say anything about a memory.
const STOPWORDS: &[&str] = &[
    "a", "about", "an", "and", "are", "as", "at", "be", "did", "do", "does", "for", "from", "had",
    "has", "have", "i", "in", "is", "it", "me", "my", "of", "on", "or", "our", "the", "their",
    "this", "to", "was", "we", "what", "when", "where", "which", "who", "with", "you", "your",
];

/// A run of lines of one memory file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Passage {
    /// 1-based first line.
    pub start: usize,
    /// 1-based last line (inclusive).
    pub end: usize,
    /// The lines, without their line breaks.
    pub lines: Vec<String>,
    /// The nearest heading above the passage (or its own first line), for scoring.
    pub heading: Option<String>,
}

/// One scored passage.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Hit {
    /// Index of the file among those searched.
    pub file: usize,
    /// The passage.
    pub passage: Passage,
    /// Higher is better.
    pub score: f64,
}

/// Cuts a file into passages: blank lines end a passage, a Markdown heading starts one, and
/// no passage is longer than [`MAX_PASSAGE_LINES`].
pub(crate) fn passages(text: &str) -> Vec<Passage> {
    let mut out = Vec::new();
    let mut current: Option<Passage> = None;
    let mut heading: Option<String> = None;
    for (i, line) in text.lines().enumerate() {
        let number = i + 1;
        let trimmed = line.trim();
        let is_heading = trimmed.starts_with('#');
        if trimmed.is_empty() || is_heading {
            out.extend(current.take());
        }
        if is_heading {
            heading = Some(trimmed.trim_start_matches('#').trim().to_owned());
        }
        if trimmed.is_empty() {
            continue;
        }
        let passage = current.get_or_insert_with(|| Passage {
            start: number,
            end: number,
            lines: Vec::new(),
            heading: heading.clone(),
        });
        passage.lines.push(line.to_owned());
        passage.end = number;
        if passage.lines.len() >= MAX_PASSAGE_LINES {
            out.extend(current.take());
        }
    }
    out.extend(current);
    out
}

/// The words of `text`, lowercased: maximal runs of letters and digits.
pub(crate) fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// The query's search terms: its distinct words without stopwords (unless nothing else is left).
pub(crate) fn terms(query: &str) -> Vec<String> {
    let all: BTreeSet<String> = words(query).into_iter().collect();
    let meaningful: Vec<String> = all
        .iter()
        .filter(|w| !STOPWORDS.contains(&w.as_str()))
        .cloned()
        .collect();
    if meaningful.is_empty() {
        all.into_iter().collect()
    } else {
        meaningful
    }
}

/// Whether a word of a memory counts as the query term: equal, or one a prefix of the other
/// when the shorter has at least four characters ("preference" finds "preferences").
fn matches(word: &str, term: &str) -> bool {
    if word == term {
        return true;
    }
    let (short, long) = if word.len() < term.len() {
        (word, term)
    } else {
        (term, word)
    };
    short.chars().count() >= 4 && long.starts_with(short)
}

fn count(words: &[String], term: &str) -> usize {
    words.iter().filter(|w| matches(w, term)).count()
}

/// Scores every passage of every file against `query`; returns the passages that match at
/// least one term, best first (ties: file order, then line).
pub(crate) fn rank(query: &str, files: &[Vec<Passage>]) -> Vec<Hit> {
    let terms = terms(query);
    if terms.is_empty() {
        return Vec::new();
    }
    let phrase = words(query).join(" ");
    let tokenized: Vec<(usize, &Passage, Vec<String>, Vec<String>)> = files
        .iter()
        .enumerate()
        .flat_map(|(file, passages)| {
            passages.iter().map(move |p| {
                let body = words(&p.lines.join("\n"));
                let heading = p.heading.as_deref().map(words).unwrap_or_default();
                (file, p, body, heading)
            })
        })
        .collect();
    #[expect(clippy::cast_precision_loss, reason = "passage counts are small")]
    let total = tokenized.len() as f64;
    let idf: Vec<f64> = terms
        .iter()
        .map(|t| {
            let df = tokenized
                .iter()
                .filter(|(_, _, body, heading)| count(body, t) + count(heading, t) > 0)
                .count();
            #[expect(clippy::cast_precision_loss, reason = "passage counts are small")]
            let df = df as f64;
            (1.0 + (total + 1.0) / (df + 0.5)).ln()
        })
        .collect();
    #[expect(clippy::cast_precision_loss, reason = "term counts are small")]
    let term_count = terms.len() as f64;
    let mut hits: Vec<Hit> = tokenized
        .into_iter()
        .filter_map(|(file, passage, body, heading)| {
            let mut score = 0.0;
            let mut covered = 0.0;
            for (term, weight) in terms.iter().zip(&idf) {
                #[expect(clippy::cast_precision_loss, reason = "word counts are small")]
                let tf = count(&body, term) as f64 + 0.5 * count(&heading, term) as f64;
                if tf > 0.0 {
                    score += weight * (1.0 + tf.ln().max(0.0));
                    covered += 1.0;
                }
            }
            if covered == 0.0 {
                return None;
            }
            score *= 0.5 + 0.5 * covered / term_count;
            if phrase.contains(' ') && body.join(" ").contains(&phrase) {
                score *= 1.5;
            }
            Some(Hit {
                file,
                passage: passage.clone(),
                score,
            })
        })
        .collect();
    hits.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then(a.file.cmp(&b.file))
            .then(a.passage.start.cmp(&b.passage.start))
    });
    hits
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passages_split_at_blank_lines_and_headings() {
        let text = "# Prefs\nlikes tea\nhates coffee\n\n## Work\nships on fridays\n";
        let p = passages(text);
        let ranges: Vec<(usize, usize)> = p.iter().map(|p| (p.start, p.end)).collect();
        assert_eq!(ranges, [(1, 3), (5, 6)]);
        assert_eq!(p[1].heading.as_deref(), Some("Work"));
    }

    #[test]
    fn long_paragraphs_are_split() {
        let text: String = (1..=30).map(|i| format!("line {i}\n")).collect();
        let ranges: Vec<(usize, usize)> =
            passages(&text).iter().map(|p| (p.start, p.end)).collect();
        assert_eq!(ranges, [(1, 12), (13, 24), (25, 30)]);
    }

    #[test]
    fn terms_drop_stopwords_unless_nothing_is_left() {
        assert_eq!(
            terms("What does the user like to drink?"),
            ["drink", "like", "user"]
        );
        assert_eq!(terms("what is it"), ["is", "it", "what"]);
        assert!(terms(" ?! ").is_empty());
    }

    #[test]
    fn ranking_prefers_rare_terms_coverage_and_phrases() {
        let files = vec![
            passages("# Notes\nthe user likes green tea\n\nthe user likes the office\n"),
            passages("green tea from Kyoto, ordered monthly\n\nsomething else entirely\n"),
        ];
        let hits = rank("green tea", &files);
        let found: Vec<(usize, usize)> = hits.iter().map(|h| (h.file, h.passage.start)).collect();
        // Both green-tea passages; the office one and the unrelated one do not match.
        assert_eq!(found.len(), 2, "{found:?}");
        assert!(found.contains(&(0, 1)) && found.contains(&(1, 1)));
        let hits = rank(
            "preference",
            &[passages("Preferences: tea\n\nno match here\n")],
        );
        assert_eq!(hits.len(), 1);
    }

    #[test]
    fn ranking_is_deterministic_on_ties() {
        let files = vec![passages("alpha\n"), passages("alpha\n")];
        let order: Vec<usize> = rank("alpha", &files).iter().map(|h| h.file).collect();
        assert_eq!(order, [0, 1]);
    }
}
