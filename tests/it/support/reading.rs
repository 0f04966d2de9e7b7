//! A research setup that reads pages: the loopback [`WebSite`] of real documents, a SearXNG
//! mock whose results are its pages, a model that plans one search task then the final
//! report, and a config that reads the pages (loopback allowed). For the tests of what is
//! done with the pages kept beside a plan (`pages/`): by `batch --previous`, `watch`, and
//! the MCP server.

use serde_json::json;

use super::scenario::{Agent, Setup, agent, final_over, searches_round};
use super::{MockLlm, MockSearch, Reply, SearchKind, WebSite};

/// The site, the search that finds its pages, the model and the setup (its config in
/// `agent.config.json`).
pub struct Reading {
    pub site: WebSite,
    pub search: MockSearch,
    pub llm: MockLlm,
    pub s: Setup,
}

impl Reading {
    /// Everything started; every run reads the site's five pages.
    pub async fn start() -> Reading {
        let site = WebSite::start().await;
        let search = MockSearch::with_results(SearchKind::Searxng, site.search_hits()).await;
        let llm = MockLlm::start().await;
        llm.set_handler(|req| match agent(req) {
            Agent::Planner if req.user_prompt().unwrap_or_default().contains("### b:") => {
                Reply::json(&final_over("b:summary"))
            }
            Agent::Planner => Reply::json(&searches_round(&["Handshake limits"])),
            Agent::Queries => Reply::json(&json!({"queries": ["client handshake timeout"]})),
            Agent::Final => Reply::content("A client must complete its handshake in time [1]."),
            _ => Reply::json(&json!({"summary": "Handshakes time out.", "analysis": "A"})),
        });
        let config = json!({"search": {
            "provider": "searxng",
            "baseURL": search.base_url(),
            "maxResults": 10,
            "read": {"allowPrivate": true, "timeoutMs": 5000}
        }});
        let s = Setup::with_config(&llm, Some(&search), config);
        Reading {
            site,
            search,
            llm,
            s,
        }
    }

    /// Every request the model was sent so far, as one text.
    pub fn asked(&self) -> String {
        self.llm
            .requests()
            .iter()
            .map(|r| r.raw_body.clone())
            .collect::<Vec<_>>()
            .join("\n")
    }
}
