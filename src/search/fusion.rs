//! Merging the results of several providers into one list: reciprocal rank fusion (each list
//! gives a result `1 / (K + rank)`; a result found by several providers adds up), then one
//! entry per URL. It needs no score comparable across providers, only their orders.

use super::SearchHit;

/// The usual constant of reciprocal rank fusion: it damps the weight of the very first ranks.
const K: f64 = 60.0;

/// The lists merged, best first, each URL once (the first list's title and snippet win),
/// at most `limit` results. Ties keep the order of the lists, then of their ranks.
pub fn reciprocal_rank_fusion(lists: &[Vec<SearchHit>], limit: usize) -> Vec<SearchHit> {
    let urls: Vec<Vec<&str>> = lists
        .iter()
        .map(|list| list.iter().map(|h| h.url.as_str()).collect())
        .collect();
    fused_order(&urls)
        .into_iter()
        .take(limit)
        .filter_map(|(url, _)| lists.iter().flatten().find(|h| h.url == url).cloned())
        .collect()
}

/// Reciprocal rank fusion of lists of keys: each key with its summed `1 / (K + rank)`, best
/// first; ties keep the order in which keys were first seen (list by list, rank by rank).
pub fn fused_order<'a>(lists: &[Vec<&'a str>]) -> Vec<(&'a str, f64)> {
    let mut merged: Vec<(&str, f64)> = Vec::new();
    for list in lists {
        for (rank, key) in list.iter().enumerate() {
            let score = 1.0 / (K + rank as f64 + 1.0);
            match merged.iter_mut().find(|(k, _)| k == key) {
                Some((_, total)) => *total += score,
                None => merged.push((key, score)),
            }
        }
    }
    // A stable sort: ties keep the order first seen.
    merged.sort_by(|a, b| b.1.total_cmp(&a.1));
    merged
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hit(url: &str) -> SearchHit {
        SearchHit {
            title: format!("T {url}"),
            url: url.into(),
            snippet: String::new(),
            in_corpus: None,
        }
    }

    #[test]
    fn found_twice_ranks_first_and_appears_once() {
        let local = vec![hit("file:///a"), hit("https://shared"), hit("file:///b")];
        let web = vec![hit("https://w1"), hit("https://shared")];
        let merged = reciprocal_rank_fusion(&[local, web], 10);
        let urls: Vec<&str> = merged.iter().map(|h| h.url.as_str()).collect();
        assert_eq!(
            urls,
            vec!["https://shared", "file:///a", "https://w1", "file:///b"]
        );
        assert_eq!(
            reciprocal_rank_fusion(&[vec![hit("x"), hit("y")]], 1).len(),
            1
        );
    }
}
