//! "Did you mean": the known name closest to a misspelt one (model layer).

/// Names longer than this many characters get no suggestion, and longer
/// candidates are never suggested: typos are looked for in names people
/// type, and comparing two names costs the product of their lengths.
const MAX_CHARS: usize = 64;

/// The number of characters of `name`, if at most [`MAX_CHARS`].
fn short_len(name: &str) -> Option<usize> {
    let len = name.chars().take(MAX_CHARS + 1).count();
    (len <= MAX_CHARS).then_some(len)
}

/// The candidate closest to `name` by edit distance (ignoring case), if it
/// is close enough to be a likely typo: at most a third of the longer name's
/// letters differ, and at least one letter in common. Names longer than
/// [`MAX_CHARS`] get no suggestion, so the work is at most
/// `MAX_CHARS²` steps per candidate, however long the names given.
pub(crate) fn nearest<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let name_len = short_len(name)?;
    let name_lower = name.to_lowercase();
    let name_lower_len = name_lower.chars().count();
    let mut best: Option<(usize, &'a str)> = None;
    for candidate in candidates {
        let Some(candidate_len) = short_len(candidate) else { continue };
        let longest = name_len.max(candidate_len);
        let candidate_lower = candidate.to_lowercase();
        // The distance is at least the difference in length.
        if name_lower_len.abs_diff(candidate_lower.chars().count()) * 3 > longest.max(1) {
            continue;
        }
        let distance = edit_distance(&name_lower, &candidate_lower);
        if distance * 3 > longest.max(1) || distance >= longest {
            continue;
        }
        if best.is_none_or(|(d, _)| distance < d) {
            best = Some((distance, candidate));
        }
    }
    best.map(|(_, candidate)| candidate)
}

/// Levenshtein distance: the fewest insertions, deletions and substitutions
/// of characters that turn `a` into `b`.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = (above + 1).min(row[j] + 1).min(diagonal + usize::from(ca != cb));
            diagonal = above;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distances() {
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("same", "same"), 0);
    }

    #[test]
    fn suggests_only_close_names() {
        let names = ["Position", "Velocity", "Health"];
        assert_eq!(nearest("Postion", names), Some("Position"));
        assert_eq!(nearest("velocity", names), Some("Velocity"));
        assert_eq!(nearest("Helth", names), Some("Health"));
        assert_eq!(nearest("Banana", names), None);
        assert_eq!(nearest("x", ["y"]), None);
    }

    #[test]
    fn long_names_get_no_suggestion() {
        let long = "a".repeat(MAX_CHARS);
        let longer = "a".repeat(MAX_CHARS + 1);
        assert_eq!(nearest(&format!("{long}b"), [long.as_str()]), None, "the name is too long");
        assert_eq!(nearest(&long[1..], [longer.as_str()]), None, "the candidate is too long");
        assert_eq!(nearest(&long[1..], [long.as_str(), longer.as_str()]), Some(long.as_str()));
        // A megabyte against a megabyte: no suggestion, and no work.
        let huge = "x".repeat(1 << 20);
        assert_eq!(nearest(&huge, [huge.as_str(), "x"]), None);
    }
}
