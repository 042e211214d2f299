//! "Did you mean ...?" suggestions from a small edit distance.

/// The closest candidate to `input`, when it is close enough to be a plausible typo: at most a
/// third of the input's length in edits (at least 1, at most 3). Case differences cost nothing
/// extra beyond one edit each, so `Workspace` suggests `workspace`. Ties go to the earliest
/// candidate in the given order.
pub(crate) fn did_you_mean<'a, I>(input: &str, candidates: I) -> Option<&'a str>
where
    I: IntoIterator<Item = &'a str>,
{
    let limit = (input.chars().count() / 3).clamp(1, 3);
    let mut best: Option<(usize, &'a str)> = None;
    for candidate in candidates {
        if candidate == input {
            continue;
        }
        let distance = if candidate.eq_ignore_ascii_case(input) {
            1
        } else {
            edit_distance(input, candidate)
        };
        if distance <= limit && best.is_none_or(|(d, _)| distance < d) {
            best = Some((distance, candidate));
        }
    }
    best.map(|(_, candidate)| candidate)
}

/// Optimal string alignment distance (Levenshtein plus adjacent transpositions), over chars.
fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let width = b.len() + 1;
    let mut table = vec![0usize; (a.len() + 1) * width];
    for (i, row) in table.chunks_mut(width).enumerate() {
        row[0] = i;
    }
    for (j, cell) in table.iter_mut().take(width).enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut value = (table[(i - 1) * width + j] + 1)
                .min(table[i * width + j - 1] + 1)
                .min(table[(i - 1) * width + j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                value = value.min(table[(i - 2) * width + j - 2] + 1);
            }
            table[i * width + j] = value;
        }
    }
    table[a.len() * width + b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distances() {
        assert_eq!(edit_distance("workspac", "workspace"), 1);
        assert_eq!(edit_distance("worksapce", "workspace"), 1);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
    }

    #[test]
    fn suggests_close_candidates_only() {
        let keys = [
            "workspace",
            "repoRoot",
            "skipBootstrap",
            "bootstrapMaxChars",
        ];
        assert_eq!(did_you_mean("workspac", keys), Some("workspace"));
        assert_eq!(did_you_mean("Workspace", keys), Some("workspace"));
        assert_eq!(
            did_you_mean("bootstrapMaxChar", keys),
            Some("bootstrapMaxChars")
        );
        assert_eq!(did_you_mean("colour", keys), None);
        assert_eq!(did_you_mean("ab", ["ac", "xy"]), Some("ac"));
    }
}
