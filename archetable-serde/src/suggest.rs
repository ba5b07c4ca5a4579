//! "Did you mean": the known name closest to a misspelt one.

/// The candidate closest to `name` by edit distance (ignoring case), if it
/// is close enough to be a likely typo: at most a third of the longer name's
/// letters differ, and at least one letter in common.
pub(crate) fn nearest<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let name_lower = name.to_lowercase();
    let mut best: Option<(usize, &'a str)> = None;
    for candidate in candidates {
        let distance = edit_distance(&name_lower, &candidate.to_lowercase());
        let longest = name.chars().count().max(candidate.chars().count());
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
}
