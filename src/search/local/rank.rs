//! The order of search results: best score first, and documents whose scores tie in path
//! order, so that the order depends on the corpus, not on where the index happened to store a
//! document. tantivy breaks ties by document address, which changes with the index's history
//! (segments are ordered by random ids), and two copies of one document can score a unit in
//! the last place apart; so scores within [`TIE`] of each other (relative) are a tie.
//! Pure ordering: no index, no files.

/// Two scores this close (relative to the larger) are a tie.
pub const TIE: f32 = 1e-4;

/// Whether `lower` ties with `higher` (`lower <= higher`).
pub fn ties(higher: f32, lower: f32) -> bool {
    higher - lower <= higher.abs() * TIE
}

/// `hits` (score, path) best first, ties in path order, cut to `limit`. Ties are runs of
/// scores each within [`TIE`] of the run's first (best) score, so a run never drifts.
pub fn rank<T>(mut hits: Vec<(f32, String, T)>, limit: usize) -> Vec<(f32, String, T)> {
    hits.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    let mut start = 0;
    while start < hits.len() {
        let head = hits[start].0;
        let end = start + hits[start..].iter().take_while(|h| ties(head, h.0)).count();
        hits[start..end].sort_by(|a, b| a.1.cmp(&b.1));
        start = end;
    }
    hits.truncate(limit);
    hits
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paths(hits: &[(f32, String, ())]) -> Vec<&str> {
        hits.iter().map(|h| h.1.as_str()).collect()
    }

    fn hit(score: f32, path: &str) -> (f32, String, ()) {
        (score, path.to_string(), ())
    }

    #[test]
    fn ties_within_a_unit_in_the_last_place_go_in_path_order() {
        let next_up = f32::from_bits(32.5f32.to_bits() + 1);
        let hits = vec![
            hit(10.0, "/c/low.md"),
            hit(next_up, "/c/b.md"),
            hit(32.5, "/c/a.md"),
            hit(40.0, "/c/z.md"),
            hit(32.5, "/c/0.md"),
        ];
        assert_eq!(
            paths(&rank(hits.clone(), 10)),
            ["/c/z.md", "/c/0.md", "/c/a.md", "/c/b.md", "/c/low.md"]
        );
        assert_eq!(paths(&rank(hits, 2)), ["/c/z.md", "/c/0.md"]);
    }

    #[test]
    fn distinct_scores_keep_their_order_and_a_run_does_not_drift() {
        // Each score within the tolerance of the next, but not of the first.
        let step = 1.0 - TIE * 0.6;
        let hits: Vec<_> = ["/e", "/d", "/c", "/b", "/a"]
            .iter()
            .enumerate()
            .map(|(i, p)| hit(100.0 * step.powi(i as i32), p))
            .collect();
        let ranked = rank(hits, 10);
        assert_eq!(paths(&ranked), ["/d", "/e", "/b", "/c", "/a"]);
        assert!(ties(5.0, 5.0) && !ties(5.0, 4.9));
    }
}
