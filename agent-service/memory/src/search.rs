//! Ranking: keyword search over the two full-text tables (and a substring scan for one- and
//! two-character terms of unspaced scripts), cosine similarity over embeddings, and the hybrid
//! combination of both.
//!
//! A query's terms are its runs of letters and digits (common English words dropped unless
//! nothing else is left). A term written in a script without spaces between words (Han, kana,
//! Hangul, Thai and the like) is matched inside text: with three or more characters, the
//! trigram table finds chunks holding any of its three-character pieces, ranked by how many
//! and how rare (BM25); with one or two, chunks holding it as a substring, scored with BM25's
//! formula. Any other term goes to the word table, where the Porter stemmer makes `runs`,
//! `running` and `run` one word (not `ran`) and a term of four or more characters also matches
//! as a prefix (`preference` finds "Preferences"). A chunk's keyword score is the sum of its
//! BM25 scores over the tables.

use std::collections::{BTreeMap, BTreeSet};

use rusqlite::Connection;

use crate::settings::Hybrid;

/// Words too common to say anything about a memory.
const STOPWORDS: &[&str] = &[
    "a", "about", "an", "and", "are", "as", "at", "be", "did", "do", "does", "for", "from", "had",
    "has", "have", "i", "in", "is", "it", "me", "my", "of", "on", "or", "our", "the", "their",
    "this", "to", "was", "we", "what", "when", "where", "which", "who", "with", "you", "your",
];

/// BM25's term-frequency saturation.
const K1: f64 = 1.2;

/// A query split for the two tables.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Terms {
    /// Terms of spaced scripts, lowercased, for the word table.
    pub words: Vec<String>,
    /// Terms of unspaced scripts, lowercased, matched inside text.
    pub unspaced: Vec<String>,
}

impl Terms {
    /// Whether the query has nothing to search for.
    pub fn is_empty(&self) -> bool {
        self.words.is_empty() && self.unspaced.is_empty()
    }
}

/// Whether `c` belongs to a script written without spaces between words.
fn unspaced(c: char) -> bool {
    matches!(u32::from(c),
        0x0E00..=0x0EFF       // Thai, Lao
        | 0x1000..=0x109F     // Myanmar
        | 0x1780..=0x17FF     // Khmer
        | 0x2E80..=0x2FDF     // CJK radicals
        | 0x3040..=0x30FF     // Hiragana, Katakana
        | 0x3100..=0x312F     // Bopomofo
        | 0x3130..=0x318F     // Hangul compatibility jamo
        | 0x31F0..=0x31FF     // Katakana extensions
        | 0x3400..=0x4DBF     // CJK extension A
        | 0x4E00..=0x9FFF     // CJK unified ideographs
        | 0xAC00..=0xD7AF     // Hangul syllables
        | 0xF900..=0xFAFF     // CJK compatibility ideographs
        | 0xFF66..=0xFF9F     // half-width Katakana
        | 0x20000..=0x3134F) // CJK extensions B-G
}

/// The query's terms (see the module docs).
pub fn terms(query: &str) -> Terms {
    let mut runs: BTreeSet<String> = BTreeSet::new();
    let mut current = String::new();
    let mut current_unspaced = false;
    let mut flush = |run: &mut String| {
        if !run.is_empty() {
            runs.insert(std::mem::take(run));
        }
    };
    for c in query.chars() {
        if c.is_alphanumeric() {
            // A change between spaced and unspaced scripts ends a term ("Kyoto旅行").
            if !current.is_empty() && unspaced(c) != current_unspaced {
                flush(&mut current);
            }
            current_unspaced = unspaced(c);
            current.extend(c.to_lowercase());
        } else {
            flush(&mut current);
        }
    }
    flush(&mut current);
    let (unspaced_terms, words): (Vec<String>, Vec<String>) =
        runs.into_iter().partition(|t| t.chars().any(unspaced));
    let meaningful: Vec<String> = words
        .iter()
        .filter(|w| !STOPWORDS.contains(&w.as_str()))
        .cloned()
        .collect();
    let words = if meaningful.is_empty() && unspaced_terms.is_empty() {
        words
    } else {
        meaningful
    };
    Terms {
        words,
        unspaced: unspaced_terms,
    }
}

fn quoted(term: &str) -> String {
    format!("\"{}\"", term.replace('"', "\"\""))
}

/// Keyword scores (higher is better) of every chunk matching any term, by row id.
pub fn keyword(conn: &Connection, terms: &Terms) -> Result<BTreeMap<i64, f64>, rusqlite::Error> {
    let mut scores: BTreeMap<i64, f64> = BTreeMap::new();
    let mut add = |id: i64, score: f64| *scores.entry(id).or_default() += score;
    if !terms.words.is_empty() {
        let query = terms
            .words
            .iter()
            .map(|w| {
                if w.chars().count() >= 4 {
                    format!("{}*", quoted(w))
                } else {
                    quoted(w)
                }
            })
            .collect::<Vec<_>>()
            .join(" OR ");
        fts(conn, "chunks_words", &query, &mut add)?;
    }
    let mut grams = BTreeSet::new();
    let mut short = Vec::new();
    for term in &terms.unspaced {
        let chars: Vec<char> = term.chars().collect();
        if chars.len() >= 3 {
            grams.extend(chars.windows(3).map(|w| w.iter().collect::<String>()));
        } else {
            short.push(term.as_str());
        }
    }
    if !grams.is_empty() {
        let query = grams
            .iter()
            .map(|g| quoted(g))
            .collect::<Vec<_>>()
            .join(" OR ");
        fts(conn, "chunks_trigram", &query, &mut add)?;
    }
    if !short.is_empty() {
        substring(conn, &short, &mut add)?;
    }
    Ok(scores)
}

fn fts(
    conn: &Connection,
    table: &str,
    query: &str,
    add: &mut impl FnMut(i64, f64),
) -> Result<(), rusqlite::Error> {
    let sql = format!("SELECT rowid, -bm25({table}) FROM {table} WHERE {table} MATCH ?1");
    let mut stmt = conn.prepare_cached(&sql)?;
    let rows = stmt.query_map([query], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, f64>(1)?)))?;
    for row in rows {
        let (id, score) = row?;
        add(id, score);
    }
    Ok(())
}

/// One- and two-character terms: chunks that contain them, scored as BM25 would (idf from how
/// many chunks hold the term, saturating term frequency, no length normalisation).
fn substring(
    conn: &Connection,
    terms: &[&str],
    add: &mut impl FnMut(i64, f64),
) -> Result<(), rusqlite::Error> {
    let total: f64 = conn.query_row("SELECT count(*) FROM chunks", [], |r| r.get::<_, f64>(0))?;
    for term in terms {
        // Scripts without case (Han, kana, Hangul) skip lowercasing every chunk.
        let caseless = term.chars().all(|c| !c.is_lowercase() && !c.is_uppercase());
        let mut stmt = conn.prepare_cached(if caseless {
            "SELECT id, text FROM chunks WHERE instr(text, ?1) > 0"
        } else {
            "SELECT id, lower(text) FROM chunks WHERE instr(lower(text), ?1) > 0"
        })?;
        let hits: Vec<(i64, String)> = stmt
            .query_map([term], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect::<Result<_, _>>()?;
        #[expect(
            clippy::cast_precision_loss,
            reason = "chunk counts are far below 2^52"
        )]
        let df = hits.len() as f64;
        let idf = (1.0 + (total - df + 0.5) / (df + 0.5)).ln();
        for (id, text) in hits {
            #[expect(clippy::cast_precision_loss, reason = "occurrence counts are small")]
            let tf = text.matches(term).count() as f64;
            add(id, idf * tf * (K1 + 1.0) / (tf + K1));
        }
    }
    Ok(())
}

/// Unit-length copies of the vectors (zero vectors stay zero), for cosine by dot product.
pub fn normalised(vectors: Vec<(i64, Vec<f32>)>) -> Vec<(i64, Vec<f32>)> {
    vectors
        .into_iter()
        .map(|(id, mut v)| {
            let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
            if norm > 0.0 {
                v.iter_mut().for_each(|x| *x /= norm);
            }
            (id, v)
        })
        .collect()
}

/// Cosine similarity of the (normalised) `query` with every (normalised) vector of the same
/// length.
pub fn cosine(query: &[f32], vectors: &[(i64, Vec<f32>)]) -> BTreeMap<i64, f64> {
    vectors
        .iter()
        .filter(|(_, v)| v.len() == query.len())
        .map(|(id, v)| {
            let dot: f32 = v.iter().zip(query).map(|(a, b)| a * b).sum();
            (*id, f64::from(dot))
        })
        .collect()
}

/// The combined ranking: the best `pool` of each search, scored
/// `vector_weight × cosine + text_weight × keyword ÷ best keyword` (or the cosine alone when
/// hybrid is off), keeping scores of at least `min_score`. Unordered.
pub fn hybrid(
    keyword: &BTreeMap<i64, f64>,
    cosine: &BTreeMap<i64, f64>,
    settings: &Hybrid,
    pool: usize,
) -> Vec<(i64, f64)> {
    let best = |scores: &BTreeMap<i64, f64>| {
        let mut all: Vec<(i64, f64)> = scores.iter().map(|(id, s)| (*id, *s)).collect();
        all.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        all.truncate(pool);
        all
    };
    let top_keyword = best(keyword);
    let max_keyword = top_keyword.first().map_or(0.0, |(_, s)| *s);
    let mut ids: BTreeSet<i64> = best(cosine).into_iter().map(|(id, _)| id).collect();
    if settings.enabled {
        ids.extend(top_keyword.iter().map(|(id, _)| *id));
    }
    ids.into_iter()
        .map(|id| {
            let vector = cosine.get(&id).copied().unwrap_or(0.0);
            let score = if settings.enabled {
                let text = match keyword.get(&id) {
                    Some(s) if max_keyword > 0.0 => s / max_keyword,
                    _ => 0.0,
                };
                settings.vector_weight * vector + settings.text_weight * text
            } else {
                vector
            };
            (id, score)
        })
        .filter(|(_, score)| *score >= settings.min_score)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terms_split_scripts_and_drop_stopwords_unless_nothing_is_left() {
        let t = terms("What does the user like to drink?");
        assert_eq!(t.words, ["drink", "like", "user"]);
        assert_eq!(terms("what is it").words, ["is", "it", "what"]);
        assert!(terms(" ?! ").is_empty());
        let t = terms("Kyoto旅行 の 締め切り, 커피");
        assert_eq!(t.words, ["kyoto"]);
        assert_eq!(t.unspaced, ["の", "旅行", "締め切り", "커피"]);
    }

    #[test]
    fn hybrid_weights_and_threshold() {
        let keyword = BTreeMap::from([(1, 4.0), (2, 2.0)]);
        let cosine = BTreeMap::from([(1, 0.1), (2, 0.9), (3, 0.5), (4, 0.0)]);
        let mut scores = hybrid(&keyword, &cosine, &Hybrid::default(), 10);
        scores.sort_by(|a, b| b.1.total_cmp(&a.1));
        let rounded: Vec<(i64, i64)> = scores
            .iter()
            .map(|(id, s)| (*id, (s * 100.0).round() as i64))
            .collect();
        // 2: 0.7*0.9 + 0.3*0.5 = 0.78; 1: 0.07 + 0.3 = 0.37; 3: 0.35; 4 is below 0.35.
        assert_eq!(rounded, [(2, 78), (1, 37), (3, 35)]);
    }
}
