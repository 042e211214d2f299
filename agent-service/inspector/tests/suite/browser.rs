//! The page in headless Chromium (installed from Debian's packages by the test itself): the
//! session list, a transcript with a tool call beside its result, a run appearing live, the
//! layers of a prompt, a cache break's diff, an exec approval pending then decided, and a message that tries to run script shown as
//! text. A screenshot of each view is written (see [`screenshots`]); the README links the
//! committed ones in `screenshots/`.

use std::{ffi::OsStr, path::PathBuf, sync::Arc, time::Duration};

use agent_testkit::FakeReply;
use base64::Engine as _;
use headless_chrome::{Browser, LaunchOptions, Tab, protocol::cdp::Page};
use serde_json::json;

use super::harness::{Inspected, KEY, next_approval};

/// What the hostile message tries: run script, by a tag and by an event handler.
const INJECTION: &str = r#"Look: <script>window.__pwned = 1; document.title = "pwned";</script><img src="x" onerror="window.__pwned = 2; document.title = 'pwned'"> <b>bold?</b>"#;

/// A command waiting for approval that carries markup and a bidi override.
const APPROVAL_COMMAND: &str =
    "touch approved.txt # <img src=x onerror=\"window.__pwned = 5\"> \u{202e}txt.exe";

const WAIT: Duration = Duration::from_secs(20);

/// Where the screenshots go: `INSPECTOR_SCREENSHOTS` when set (the README's images are
/// refreshed with `INSPECTOR_SCREENSHOTS=agent-service/inspector/screenshots`), else the
/// target directory, so an ordinary test run leaves the tracked files alone.
fn screenshots() -> PathBuf {
    match std::env::var_os("INSPECTOR_SCREENSHOTS") {
        Some(dir) => {
            let dir = PathBuf::from(dir);
            if dir.is_absolute() {
                dir
            } else {
                PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                    .join("../..")
                    .join(dir)
            }
        }
        None => {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/inspector-screenshots")
        }
    }
}

fn browser() -> Browser {
    let chromium = agent_testkit::packages::ensure_program("chromium", "chromium")
        .expect("chromium installed");
    // Root in a container has no user namespaces for Chromium's sandbox.
    let options = LaunchOptions::default_builder()
        .path(Some(chromium))
        .headless(false)
        .sandbox(false)
        .args(vec![
            OsStr::new("--headless=new"),
            OsStr::new("--hide-scrollbars"),
            OsStr::new("--force-device-scale-factor=1"),
        ])
        .window_size(Some((1360, 940)))
        .idle_browser_timeout(Duration::from_secs(120))
        .build()
        .expect("launch options");
    Browser::new(options).expect("start chromium")
}

/// A new tab on the inspector's page, loaded.
fn open_page(browser: &Browser, h: &Inspected) -> Arc<Tab> {
    let tab = browser.new_tab().expect("tab");
    tab.set_default_timeout(WAIT);
    let url = format!("{}/", h.http);
    tokio::task::block_in_place(|| {
        tab.navigate_to(&url).expect("navigate");
        tab.wait_until_navigated().expect("loaded");
    });
    tab
}

/// Evaluates `js` (an expression) to JSON.
fn eval(tab: &Tab, js: &str) -> serde_json::Value {
    json_of(
        tab,
        &format!("JSON.stringify((() => {{ return {js}; }})())"),
        false,
    )
}

/// Evaluates `wrapped` (an expression that yields JSON text; with `await_promise` a promise
/// of it) and parses the text.
fn json_of(tab: &Tab, wrapped: &str, await_promise: bool) -> serde_json::Value {
    let result = tab.evaluate(wrapped, await_promise).expect("evaluate");
    let text = result
        .value
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_else(|| "null".to_owned());
    serde_json::from_str(&text).expect("JSON from the page")
}

/// Waits until `js` is true on the page.
fn until(tab: &Tab, js: &str, what: &str) {
    let deadline = std::time::Instant::now() + WAIT;
    while std::time::Instant::now() < deadline {
        if eval(tab, js) == json!(true) {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let status = eval(tab, "document.getElementById('status').textContent");
    panic!("{what} did not happen within {WAIT:?} (page status: {status})");
}

/// The whole page (up to 2,400 px high) as a PNG in [`screenshots`].
fn screenshot(tab: &Tab, name: &str) {
    let height = eval(tab, "document.documentElement.scrollHeight")
        .as_f64()
        .unwrap_or(940.0)
        .min(2400.0);
    let data = tab
        .call_method(Page::CaptureScreenshot {
            format: Some(Page::CaptureScreenshotFormatOption::Png),
            quality: None,
            clip: Some(Page::Viewport {
                x: 0.0,
                y: 0.0,
                width: 1360.0,
                height,
                scale: 1.0,
            }),
            from_surface: Some(true),
            capture_beyond_viewport: Some(true),
            optimize_for_speed: None,
        })
        .expect("screenshot")
        .data;
    let png = base64::engine::general_purpose::STANDARD
        .decode(data)
        .expect("base64 PNG");
    std::fs::create_dir_all(screenshots()).expect("screenshots dir");
    std::fs::write(screenshots().join(name), png).expect("write screenshot");
}

fn text_of(tab: &Tab, selector: &str) -> String {
    eval(
        tab,
        &format!("(document.querySelector({selector:?}) || {{}}).textContent || ''"),
    )
    .as_str()
    .unwrap_or_default()
    .to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_page_shows_sessions_transcripts_live_runs_layers_and_cache_breaks() {
    let h = Inspected::start(&[]).await;
    let agents_md = h.path("state/workspace/AGENTS.md");
    std::fs::write(
        &agents_md,
        "# Rules\n\nKeep answers short.\nAlways answer in English.\nCite the file you read.\n",
    )
    .expect("AGENTS.md");
    std::fs::write(
        h.path("state/workspace/notes.txt"),
        "The launch code is 1234.",
    )
    .expect("notes");
    h.create_main_session().await;
    h.observe().await;
    h.fake.push_all([
        FakeReply::tool_call("call-1", "read", json!({ "path": "notes.txt" }))
            .with_text("Let me look."),
        FakeReply::text(
            "The note says the launch code is 1234. <script>window.__pwned = 3</script>",
        ),
    ]);
    h.run(INJECTION).await;

    let browser = browser();
    let tab = open_page(&browser, &h);
    tokio::task::block_in_place(|| {
        let selector = format!(".session[data-key={KEY:?}]");
        tab.wait_for_element(&selector)
            .expect("the session is listed");
        let listed = text_of(&tab, &selector);
        assert!(
            listed.contains("tokens") && listed.contains("0 compactions"),
            "{listed}"
        );
        until(
            &tab,
            "document.querySelectorAll('.agent').length === 1",
            "the agent list",
        );
        screenshot(&tab, "sessions.png");

        tab.wait_for_element(&selector)
            .expect("session")
            .click()
            .expect("open the session");
        tab.wait_for_element("#transcript .entry.user")
            .expect("the transcript");
        let user = text_of(&tab, "#transcript .entry.user .text");
        assert_eq!(user, INJECTION, "the message is shown as text, whole");
        // Nothing of it ran, and no element came of it.
        assert_eq!(eval(&tab, "typeof window.__pwned"), json!("undefined"));
        assert_eq!(
            eval(&tab, "document.title"),
            json!("agent-service inspector")
        );
        assert_eq!(
            eval(
                &tab,
                "document.querySelectorAll('#view script, #view img, #view b').length"
            ),
            json!(0)
        );
        // The tool call carries its result.
        let call = text_of(&tab, "#transcript .tool-call");
        assert!(
            call.contains("read") && call.contains("The launch code is 1234."),
            "{call}"
        );
        assert_eq!(
            eval(
                &tab,
                "document.querySelectorAll('#transcript .tool-result-entry').length"
            ),
            json!(0),
            "the result sits under its call, not on its own"
        );
        until(
            &tab,
            "document.getElementById('status').textContent === 'watching for runs'",
            "the event stream opening",
        );
        screenshot(&tab, "transcript.png");
        // Marks what is on the page now: a run's end appends, it does not redraw.
        eval(
            &tab,
            "(window.__firstEntry = document.querySelector('#transcript .entry'), true)",
        );
    });

    // A run while the page is open appears live as it streams, then in the transcript.
    h.fake.push(
        FakeReply::text("Live reply from the model, streamed in parts.")
            .deltas(8)
            .frame_delay(Duration::from_millis(250)),
    );
    let mut events = h.start_run("Say something live").await;
    let run =
        tokio::spawn(async move { while events.message().await.expect("event").is_some() {} });
    tokio::task::block_in_place(|| {
        // Part of the reply is on the page while the run still streams.
        until(
            &tab,
            "(() => { const t = (document.querySelector('#live .live-run') || {}).textContent || ''; \
             return t.includes('Live') && !t.includes('finished'); })()",
            "the run appearing while it streams",
        );
        let running = text_of(&tab, "#live .live-run");
        assert!(running.contains("model call 1"), "{running}");
        screenshot(&tab, "live-run.png");
    });
    run.await.expect("run task");
    tokio::task::block_in_place(|| {
        until(
            &tab,
            "(document.querySelector('#live .live-run') || {}).textContent?.includes('Live reply from the model, streamed in parts.') === true",
            "the whole live reply",
        );
        let live = text_of(&tab, "#live .live-run");
        assert!(live.contains("finished"), "{live}");
        until(
            &tab,
            "[...document.querySelectorAll('#transcript .entry.user .text')].some(e => e.textContent === 'Say something live')",
            "the transcript reloading after the run",
        );
        assert_eq!(
            eval(&tab, "document.contains(window.__firstEntry)"),
            json!(true),
            "the entries shown before the run are kept (older pages loaded stay loaded)"
        );
        let total = eval_async(
            &tab,
            &format!(
                "fetch('/api/transcript?agent=main&key={KEY}&limit=1').then((r) => r.json()).then((p) => p.total)"
            ),
        );
        until(
            &tab,
            &format!(
                "(document.querySelector('#transcript .entry-count') || {{}}).textContent === '{total} entries'"
            ),
            "the entry count following the appended entries",
        );
    });

    // Change a bootstrap file: the next call's stable prefix changes in that section.
    std::fs::write(
        &agents_md,
        "# Rules\n\nKeep answers short.\nAlways answer in French.\nCite the file you read.\n",
    )
    .expect("AGENTS.md");
    h.fake.push(FakeReply::text("Réponse en français."));
    h.run("And now?").await;

    tokio::task::block_in_place(|| {
        tab.wait_for_element("button[data-tab=layers]")
            .expect("tab")
            .click()
            .expect("layers tab");
        tab.wait_for_element("#layers .sections-table")
            .expect("the layers view");
        assert_eq!(
            eval(
                &tab,
                "document.querySelectorAll('#layers .bar.sections .seg.stable').length > 0 && document.querySelectorAll('#layers .bar.sections .seg.dynamic').length > 0"
            ),
            json!(true)
        );
        let files = text_of(&tab, "#layers .files-table");
        assert!(
            files.contains("AGENTS.md") && files.contains("injected"),
            "{files}"
        );
        let tools = text_of(&tab, "#layers .tools-table");
        assert!(tools.contains("read"), "{tools}");
        screenshot(&tab, "layers.png");

        tab.wait_for_element("button[data-tab=cache]")
            .expect("tab")
            .click()
            .expect("cache tab");
        tab.wait_for_element("#cache table.diff").expect("a diff");
        let first = text_of(&tab, "#cache .break .first");
        assert!(first.contains("AGENTS.md"), "{first}");
        let old = text_of(&tab, "#cache table.diff tr.replace td.old");
        let new = text_of(&tab, "#cache table.diff tr.replace td.new");
        assert_eq!(
            (old.as_str(), new.as_str()),
            ("Always answer in English.", "Always answer in French.")
        );
        screenshot(&tab, "cache-breaks.png");
    });

    // A command waiting for a person appears in the session view as it is asked, read-only,
    // and shows the decision once it is made elsewhere.
    h.fake.push_all([
        FakeReply::tool_call("call-2", "exec", json!({ "command": APPROVAL_COMMAND })),
        FakeReply::text("Made it."),
    ]);
    let mut stream = h.start_run("Make the file.").await;
    let approval = next_approval(&mut stream).await;
    let row = format!("#approvals tr[data-approval-id={:?}]", approval.id);
    tokio::task::block_in_place(|| {
        until(
            &tab,
            &format!("(document.querySelector({row:?}) || {{}}).dataset?.state === 'pending'"),
            "the pending approval in the session view",
        );
        let text = text_of(&tab, &row);
        // Shown as text, with the bidi override as an escape; nothing of it ran.
        assert!(
            text.contains(
                r#"touch approved.txt # <img src=x onerror="window.__pwned = 5"> \u{202e}txt.exe"#
            ) && text.contains("expires"),
            "{text}"
        );
        let live = text_of(&tab, "#live .live-run");
        assert!(
            live.contains(r"needed to run: touch approved.txt")
                && live.contains(r"\u{202e}txt.exe"),
            "{live}"
        );
        assert!(!live.contains('\u{202e}'), "{live}");
        assert_eq!(eval(&tab, "typeof window.__pwned"), json!("undefined"));
        assert_eq!(
            eval(
                &tab,
                "document.querySelectorAll('#approvals img, #live img').length"
            ),
            json!(0)
        );
        assert!(text_of(&tab, "#approvals h3").contains("1 pending"));
        // Read-only: nothing on the page decides.
        assert_eq!(
            eval(
                &tab,
                "document.querySelectorAll('#approvals button, #approvals form, #approvals input').length"
            ),
            json!(0)
        );
        screenshot(&tab, "approvals.png");
    });
    h.decide(
        &approval.id,
        openclaw_proto::agent::v1::ApprovalDecision::AllowOnce,
    )
    .await;
    while stream.message().await.expect("event").is_some() {}
    tokio::task::block_in_place(|| {
        until(
            &tab,
            &format!("(document.querySelector({row:?}) || {{}}).dataset?.state === 'allowed once'"),
            "the decision in the session view",
        );
        let text = text_of(&tab, &row);
        assert!(text.contains("by ada"), "{text}");
        assert!(text_of(&tab, "#approvals h3").contains("0 pending"));
    });
}

/// Evaluates `js` (an expression yielding a promise) and waits for its JSON value.
fn eval_async(tab: &Tab, js: &str) -> serde_json::Value {
    json_of(
        tab,
        &format!("(async () => JSON.stringify(await ({js})))()"),
        true,
    )
}

/// Sessions the scale test creates besides the main one.
const MANY: usize = 10_000;

/// Ten thousand sessions: the page draws one page of them, grows by a page on request, and a
/// refresh with nothing new redraws nothing; a deep link to a session's layers names the
/// session. Prints first paint and refresh times (figures for the README, not assertions).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_thousand_sessions_are_listed_a_page_at_a_time() {
    let h = Inspected::start(&[]).await;
    h.create_main_session().await;
    // The index as ten thousand created sessions leave it, written in one update through the
    // transcript crate's own store (creating them one by one over gRPC rewrites the index
    // each time and takes minutes in a debug build).
    let store = openclaw_transcript::SessionStore::new(
        h.path("state"),
        &openclaw_transcript::AgentId::new("main").expect("agent id"),
        Arc::new(openclaw_transcript::SystemClock),
    );
    let now = jiff::Timestamp::now().as_millisecond();
    store
        .update(|index| {
            for n in 0..MANY {
                let mut entry = openclaw_transcript::SessionEntry::new(
                    openclaw_transcript::SessionId::new_v4(),
                    now - 1_000 - n as i64,
                );
                entry.display_name = Some(format!("load test {n}"));
                let key = openclaw_transcript::SessionKey::new(format!("agent:main:load-{n:05}"))
                    .expect("key");
                index.insert(key, entry);
            }
        })
        .expect("seed the index");
    h.fake.push(FakeReply::text("Hello."));
    h.run("hi").await;

    let browser = browser();
    let tab = open_page(&browser, &h);
    tokio::task::block_in_place(|| {
        until(
            &tab,
            "performance.getEntriesByName('sessions-drawn').length > 0",
            "the first page of sessions",
        );
        let first_paint = eval(
            &tab,
            "performance.getEntriesByName('sessions-drawn')[0].startTime",
        );
        assert_eq!(
            eval(&tab, "document.querySelectorAll('.session').length"),
            json!(50)
        );
        let heading = text_of(&tab, "#sessions h2");
        assert_eq!(heading, "Sessions (10,001)");
        assert_eq!(
            eval(&tab, "document.querySelector('.session').dataset.key"),
            json!(KEY),
            "the session that ran last comes first"
        );
        let height = eval(&tab, "document.documentElement.scrollHeight");
        assert!(height.as_f64().unwrap_or(f64::MAX) < 10_000.0, "{height}");

        // A refresh with nothing new: the same nodes stay.
        let unchanged = eval_async(
            &tab,
            "(async () => { window.__row = document.querySelector('.session'); \
             const t = performance.now(); await loadSessions(); const ms = performance.now() - t; \
             return { ms, same: document.querySelector('.session') === window.__row }; })()",
        );
        assert_eq!(unchanged["same"], json!(true), "{unchanged}");
        // A forced one (what happens when a row changed) redraws the page it shows.
        let forced = eval_async(
            &tab,
            "(async () => { const t = performance.now(); await loadSessions({ force: true }); \
             return { ms: performance.now() - t, same: document.querySelector('.session') === window.__row }; })()",
        );
        assert_eq!(forced["same"], json!(false), "{forced}");
        let bytes = eval_async(
            &tab,
            "(async () => { const r = await fetch('/api/sessions?limit=50'); return (await r.text()).length; })()",
        );
        eprintln!(
            "{MANY} sessions: first paint {first_paint} ms after navigation start; refresh with nothing new {} ms; \
             refresh that redraws 50 rows {} ms; one page of 50 is {bytes} bytes",
            unchanged["ms"], forced["ms"]
        );

        // One more page on request.
        tab.wait_for_element(".more-sessions")
            .expect("the more button")
            .click()
            .expect("more");
        until(
            &tab,
            "document.querySelectorAll('.session').length === 100",
            "a second page",
        );

        // A deep link to the layers of a session names the session.
        let link = format!(
            "{}/#agent=main&key=agent:main:load-00042&tab=layers",
            h.http
        );
        let fresh: Arc<Tab> = browser.new_tab().expect("tab");
        fresh.set_default_timeout(WAIT);
        fresh.navigate_to(&link).expect("navigate");
        fresh.wait_until_navigated().expect("loaded");
        until(
            &fresh,
            "(document.querySelector('#session-head h2') || {}).textContent === 'agent:main:load-00042'",
            "the session named on a deep link",
        );
    });
}
