//! `researchflow watch`: a questions file run from cron, each run in a new dated folder of a watch
//! folder and compared with the last finished run that answered each question. The folder's runs,
//! `latest` and pruning (`runs.rs`); each run's record, `watch.json` (`record.rs`); the comparison
//! of each question (`compare.rs`) into a digest of changes with kinds and levels (`digest.rs`);
//! the folder's `index.html` (`history.rs`); each run's kept pages, seeded from the last run's
//! (`pages.rs`); telling what changed to a webhook (`notify.rs`) or by mail (`mail.rs`), what
//! their servers say back cleaned of the notification's secrets (`secrets.rs`). One run of the
//! folder, from the lock to the index, is a [`watch_run::WatchRun`] (`watch_run.rs`): it runs
//! the batch in between, as `batch` does; the command (`cmd/watch.rs`) prints its end.

pub mod compare;
pub mod digest;
pub mod history;
pub mod mail;
pub mod notify;
pub mod pages;
pub mod record;
pub mod runs;
pub mod secrets;
pub mod watch_run;
