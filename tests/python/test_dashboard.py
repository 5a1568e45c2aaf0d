"""The dashboard in a real browser (Debian's Chromium, headless, driven by
Selenium) against running front-ends: every page loads with no console
error and shows what the test wrote; a retry from the dead-letter page
re-delivers; an option edited on the queue page is visible through SQL; a
read-only token sees no button that changes state; a database that is down
is said so. Each page's screenshot goes under target/dashboard/."""

import asyncio
import base64
import hashlib
import hmac
import json
import os
import subprocess
import time
import uuid
from pathlib import Path
from urllib.request import Request, urlopen

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.common.exceptions import (
    NoSuchElementException,
    StaleElementReferenceException,
    TimeoutException,
)
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as ec
from selenium.webdriver.support.ui import WebDriverWait

from queen import Queen

URL = os.environ.get("QUEEN_URL", "http://127.0.0.1:6633")
URL_JWT = os.environ.get("QUEEN_URL_JWT", "http://127.0.0.1:6634")
URL_DOWN = os.environ.get("QUEEN_URL_DOWN", "http://127.0.0.1:6635")
JWT_SECRET = os.environ.get("QUEEN_JWT_SECRET", "queen-test-secret")
DSN = os.environ.get("QUEEN_TEST_DSN", "host=127.0.0.1 port=6533 user=postgres dbname=queen")
SHOTS = Path(os.environ.get("QUEEN_SCREENSHOTS", Path(__file__).resolve().parents[2] / "target" / "dashboard"))
CHROMIUM = os.environ.get("QUEEN_CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("QUEEN_CHROMEDRIVER", "/usr/bin/chromedriver")
WAIT_S = 20


def wait(driver, timeout=WAIT_S):
    """A wait whose condition may read elements the page replaces meanwhile
    (a table drawn again after a change): such a read is tried again."""
    return WebDriverWait(
        driver, timeout, ignored_exceptions=(NoSuchElementException, StaleElementReferenceException)
    )


def name(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


def sql(query: str) -> str:
    """One value through psql, as the database holds it."""
    out = subprocess.run(
        ["psql", DSN, "-XAtq", "-v", "ON_ERROR_STOP=1", "-c", query],
        check=True,
        capture_output=True,
        text=True,
    )
    return out.stdout.strip()


def token(roles, sub="dash-test"):
    """An HS256 token for the JWT front-end."""

    def b64(raw: bytes) -> str:
        return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()

    header = b64(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    claims = b64(json.dumps({"sub": sub, "roles": roles, "exp": int(time.time()) + 3600}).encode())
    signed = f"{header}.{claims}".encode()
    mac = hmac.new(JWT_SECRET.encode(), signed, hashlib.sha256).digest()
    return f"{header}.{claims}.{b64(mac)}"


async def _populate():
    """A queue with two partitions, a group behind, a dead letter, a timer
    and retention history; answers what a page must show."""
    w = {
        "queue": name("dash"),
        "kept": name("dash-kept"),
        "group": name("billing"),
        "dead_txn": f"dead-{uuid.uuid4().hex[:8]}",
        "doomed_txn": f"doomed-{uuid.uuid4().hex[:8]}",
    }
    async with Queen(URL) as q:
        queue = w["queue"]
        await q.queue(queue).config({"retry_limit": 0}).create()
        await q.queue(queue).partition("p1").push([{"data": {"n": i}} for i in range(5)])
        await q.queue(queue).partition("p2").push([{"data": {"n": i}} for i in range(3)])
        # A group that read one message of five and is behind.
        msgs = await q.queue(queue).group(w["group"]).batch(1).autopilot(False).wait(False).pop()
        await q.ack(msgs, True, {"group": w["group"]})
        # A dead letter: pushed, popped in queue mode and failed.
        await q.queue(queue).partition("p3").push(
            [{"data": {"order": 42, "why": "poisoned"}, "transactionId": w["dead_txn"]}]
        )
        failed = []
        for _ in range(10):
            got = await q.queue(queue).partition("p3").batch(1).autopilot(False).wait(False).pop()
            failed.extend(got)
            if failed:
                break
        assert failed, "the message to fail was popped"
        await q.ack(failed, False, {"error": "payment API timed out"})
        # A second dead letter, for the delete.
        await q.queue(queue).partition("p4").push([{"data": {"order": 43}, "transactionId": w["doomed_txn"]}])
        doomed = await q.queue(queue).partition("p4").batch(1).autopilot(False).wait(False).pop()
        assert doomed, "the second message to fail was popped"
        await q.ack(doomed, False, {"error": "card declined"})
        # Retention history: a queue whose messages are past their retention.
        kept = w["kept"]
        await q.queue(kept).config({"retention_enabled": True, "retention_seconds": 1}).create()
        await q.queue(kept).push([{"data": {"old": i}} for i in range(4)])
    time.sleep(2.2)
    sql("SELECT queen_internal.retention_run_cycle()")
    # A sample of the per-minute series the charts draw.
    sql("SELECT queen_internal.metrics_sample()")
    w["partition_id"] = sql(
        "SELECT p.id FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id "
        f"WHERE q.name = '{w['queue']}' AND p.name = 'p3'"
    )
    # A trace event on the message that failed.
    req = Request(
        f"{URL}/api/v1/traces",
        data=json.dumps(
            {"transactionId": w["dead_txn"], "partitionId": w["partition_id"], "eventType": "info",
             "traceNames": ["order-42"], "data": {"step": "charge card"}}
        ).encode(),
        headers={"content-type": "application/json"},
    )
    urlopen(req).read()
    # A timer an hour away, and a KV key.
    sql(f"SELECT queen.timer_schedule('{w['queue']}', 'remind-42', '{{\"invoice\": 42}}', 3600000)")
    w["kv_ns"] = name("carts")
    sql(
        "SELECT queen.kv('{\"operations\": [{\"op\": \"put\", \"ns\": \"%s\", "
        "\"key\": \"c-1\", \"value\": {\"items\": 2}, \"ttlSeconds\": 3600}]}')" % w["kv_ns"]
    )
    return w


@pytest.fixture(scope="module")
def written():
    return asyncio.run(_populate())


async def _dead_letter(queue: str, data, error: str) -> str:
    """A message of its own partition, popped in queue mode and failed;
    answers its transaction id."""
    txn = f"dl-{uuid.uuid4().hex[:10]}"
    partition = name("p")
    async with Queen(URL) as q:
        await q.queue(queue).config({"retry_limit": 0}).create()
        await q.queue(queue).partition(partition).push([{"data": data, "transactionId": txn}])
        got = await q.queue(queue).partition(partition).batch(1).autopilot(False).wait(False).pop()
        assert got, "the message to fail was popped"
        await q.ack(got, False, {"error": error})
    return txn, partition


@pytest.fixture
def dead(written):
    """A dead letter for one test alone, in a partition of its own of the
    test queue: its transaction id."""
    return asyncio.run(_dead_letter(written["queue"], {"order": 7}, "stock service down"))[0]


@pytest.fixture
def dead_at(written):
    """As `dead`, with its partition and payload."""
    data = {"order": 8, "test": uuid.uuid4().hex}
    txn, partition = asyncio.run(_dead_letter(written["queue"], data, "stock service down"))
    return {"txn": txn, "partition": partition, "data": data}


def dlq_txns(queue: str):
    answer = json.loads(urlopen(f"{URL}/api/v1/dlq?queue={queue}").read())
    return [m["transactionId"] for m in answer["messages"]]


def _browser(width=1280, height=900):
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", f"--window-size={width},{height}"]:
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
    driver.set_window_size(width, height)
    return driver


@pytest.fixture
def browser():
    driver = _browser()
    yield driver
    driver.quit()


def errors(driver, settle=1.0):
    """The console's errors since the last call, after `settle` seconds in
    which the page's late polls may log theirs."""
    time.sleep(settle)
    return [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]


def open_page(driver, base, page):
    driver.get(f"{base}/#{page}")


def shows(driver, text, timeout=WAIT_S):
    """Waits until the page's text holds `text`."""
    try:
        wait(driver, timeout).until(lambda d: text in d.find_element(By.TAG_NAME, "main").text)
    except TimeoutException:
        shown = driver.find_element(By.TAG_NAME, "body").text
        raise AssertionError(f"{text!r} is not on {driver.current_url}:\n{shown}") from None


def shot(driver, file):
    SHOTS.mkdir(parents=True, exist_ok=True)
    driver.save_screenshot(str(SHOTS / file))


def button(driver, label, within=None):
    scope = within or driver
    return wait(driver).until(
        lambda d: next((b for b in scope.find_elements(By.TAG_NAME, "button") if b.text == label and b.is_enabled()), None)
    )


def test_every_page_loads_and_shows_what_was_written(written, browser):
    pages = [
        ("/", [written["queue"], written["group"], "dash-kept", "partition_cleanup", "retention_watermark", "Tables of the extension: "], "overview"),
        (f"/queues/{written['queue']}", ["p1", "p2", written["group"], "leaseTime", "No retention rule deletes", "Transaction ids pushed before"], "queue"),
        ("/groups", [written["group"], written["queue"]], "groups"),
        (f"/groups/{written['group']}", ["cursor per partition", "p1"], "group"),
        ("/dlq", [written["dead_txn"], "payment API timed out", written["doomed_txn"], "card declined"], "dlq"),
        ("/timers", ["remind-42", written["kv_ns"]], "timers"),
    ]
    for page, texts, file in pages:
        open_page(browser, URL, page)
        if page == "/timers":
            browser.find_element(By.ID, "timers-queue").send_keys(written["queue"])
            browser.find_element(By.ID, "timers-go").click()
        for text in texts:
            shows(browser, text)
        if page == "/timers":
            # An hour away, as the test scheduled it.
            row = next(r for r in browser.find_elements(By.CSS_SELECTOR, "#timers tbody tr") if "remind-42" in r.text)
            assert "in 60 min" in row.text or "in 59 min" in row.text, row.text
            # The totals count the test's timer and key among any others.
            held = browser.find_element(By.ID, "held").text.splitlines()
            assert int(held[held.index("Timers set") + 1].replace(",", "")) >= 1, held
            assert int(held[held.index("KV rows") + 1].replace(",", "")) >= 1, held
        shot(browser, f"{file}.png")
        assert errors(browser) == [], f"console errors on {page}"
    # Retention history: the queue kept one second lost its four messages
    # (other tests' queues may add theirs).
    open_page(browser, URL, "/")
    shows(browser, "Deleted ")
    said = browser.find_element(By.ID, "workers").text
    deleted = int(said.split("Deleted ", 1)[1].split(" ", 1)[0].replace(",", ""))
    assert deleted >= 4, said
    # The groups behind list names the group, as far behind as the API says.
    lag = json.loads(urlopen(f"{URL}/api/v1/consumer-groups").read())
    mine = next(g for g in lag if g["name"] == written["group"])
    assert mine["totalLag"] > 0
    wait(browser).until(
        lambda d: any(
            written["group"] in row.text and str(mine["totalLag"]) in row.text.split()
            for row in d.find_elements(By.CSS_SELECTOR, "#behind tbody tr")
        )
    )


def test_messages_are_browsed_and_one_is_found_by_its_transaction_id(written, browser):
    open_page(browser, URL, "/messages")
    browser.find_element(By.ID, "msg-queue").send_keys(written["queue"])
    browser.find_element(By.ID, "msg-partition").send_keys("p1")
    browser.find_element(By.ID, "msg-browse").click()
    shows(browser, f"{written['queue']}/p1")
    rows = [r for r in browser.find_elements(By.CSS_SELECTOR, "tbody tr") if f"{written['queue']}/p1" in r.text]
    assert len(rows) == 5, [r.text for r in rows]
    shot(browser, "messages.png")
    browser.find_element(By.ID, "look-partition").send_keys(written["partition_id"])
    browser.find_element(By.ID, "look-txn").send_keys(written["dead_txn"])
    browser.find_element(By.ID, "look-go").click()
    shows(browser, f"Message {written['dead_txn']}")
    shows(browser, "poisoned")
    shows(browser, "charge card")
    shows(browser, "order-42")
    shot(browser, "message.png")
    assert errors(browser) == []


def test_the_pages_fit_a_narrow_screen(written):
    driver = _browser(390, 844)
    try:
        assert driver.execute_script("return window.innerWidth") == 390
        for page, texts, file in [
            ("/", [written["queue"], "Tables of the extension: ", "partition_cleanup"], "overview-390"),
            (f"/queues/{written['queue']}", ["leaseTime", written["group"], "Transaction ids pushed before"], "queue-390"),
            ("/groups", [written["group"]], "groups-390"),
            ("/dlq", [written["dead_txn"]], "dlq-390"),
            ("/timers", [written["kv_ns"]], "timers-390"),
        ]:
            open_page(driver, URL, page)
            for text in texts:
                shows(driver, text)
            wide = driver.execute_script(
                "return Math.max(document.documentElement.scrollWidth,"
                " ...[...document.querySelectorAll('.scroll')].map(e => e.scrollWidth))"
            )
            assert wide <= 390, f"{page} is {wide} px wide at 390"
            shot(driver, f"{file}.png")
        assert errors(driver) == []
    finally:
        driver.quit()


def test_a_retry_from_the_dead_letter_page_redelivers(written, dead_at, browser):
    dead = dead_at["txn"]
    open_page(browser, URL, "/dlq")
    browser.find_element(By.ID, "dlq-queue").send_keys(written["queue"])
    browser.find_element(By.ID, "dlq-apply").click()
    shows(browser, dead)
    row = next(r for r in browser.find_elements(By.CSS_SELECTOR, "tbody tr") if dead in r.text)
    button(browser, "Retry", row).click()
    shows(browser, "pushed back to")
    wait(browser).until(
        lambda d: all(dead not in r.text for r in d.find_elements(By.CSS_SELECTOR, "tbody tr"))
    )
    assert dead not in dlq_txns(written["queue"])
    assert errors(browser) == []

    async def redelivered():
        async with Queen(URL) as q:
            for _ in range(20):
                got = await q.queue(written["queue"]).partition(dead_at["partition"]).batch(10).autopilot(False).wait(False).pop()
                if got:
                    return got
                await asyncio.sleep(0.2)
        return []

    got = asyncio.run(redelivered())
    assert len(got) == 1, got
    assert got[0]["data"] == dead_at["data"]
    assert got[0]["transactionId"].startswith("dlq:")


def test_a_delete_from_the_dead_letter_page_removes_it(written, dead, browser):
    open_page(browser, URL, "/dlq")
    # The page asks before it deletes: the test says yes.
    browser.execute_script("window.confirm = () => true")
    browser.find_element(By.ID, "dlq-queue").send_keys(written["queue"])
    browser.find_element(By.ID, "dlq-apply").click()
    shows(browser, dead)
    row = next(r for r in browser.find_elements(By.CSS_SELECTOR, "tbody tr") if dead in r.text)
    button(browser, "Delete", row).click()
    shows(browser, f"Message {dead} deleted with 1 dead letters.")
    assert dead not in dlq_txns(written["queue"])
    assert written["dead_txn"] in dlq_txns(written["queue"]), "another dead letter is untouched"
    assert errors(browser) == []


def test_a_seek_to_the_beginning_from_the_group_page_rewinds_its_cursor(written, browser):
    def lag():
        groups = json.loads(urlopen(f"{URL}/api/v1/consumer-groups").read())
        return next(g["totalLag"] for g in groups if g["name"] == written["group"] and g["queueName"] == written["queue"])

    before = lag()
    open_page(browser, URL, f"/groups/{written['group']}")
    browser.execute_script("window.confirm = () => true")
    shows(browser, "cursor per partition")
    row = wait(browser).until(
        lambda d: next((r for r in d.find_elements(By.CSS_SELECTOR, "#groups tbody tr") if written["group"] in r.text), None)
    )
    button(browser, "To beginning", row).click()
    wait(browser).until(lambda d: lag() > before)
    assert errors(browser) == []


def test_an_option_edited_on_the_queue_page_is_visible_through_sql(written, browser):
    queue = written["queue"]
    before = json.loads(sql(f"SELECT queen.queue_get('{queue}')::json -> 'options'"))
    open_page(browser, URL, f"/queues/{queue}")
    button(browser, "Edit options").click()
    lease = browser.find_element(By.ID, "opt-leaseTime")
    lease.clear()
    lease.send_keys("123")
    browser.find_element(By.ID, "save-options").click()
    shows(browser, "Saved: leaseTime.")
    after = json.loads(sql(f"SELECT queen.queue_get('{queue}')::json -> 'options'"))
    assert after["leaseTime"] == 123
    # Merge: every other option kept its value.
    assert {k: v for k, v in after.items() if k != "leaseTime"} == {k: v for k, v in before.items() if k != "leaseTime"}
    wait(browser).until(
        lambda d: d.find_element(By.CSS_SELECTOR, '[data-option="leaseTime"]').text == "123"
    )
    assert errors(browser) == []


CHANGING = {"Edit options", "To beginning", "To end", "Seek", "Delete", "Retry"}


def labels(driver):
    return {b.text for b in driver.find_elements(By.CSS_SELECTOR, "main button")}


def give_token(driver, roles):
    box = wait(driver).until(ec.visibility_of_element_located((By.ID, "token-input")))
    box.send_keys(token(roles))
    button(driver, "Use this token").click()


def test_a_token_is_asked_for_and_a_read_only_one_sees_no_state_changing_button(written, dead, browser):
    queue = written["queue"]
    open_page(browser, URL_JWT, f"/queues/{queue}")
    # Asked at once; dismissed, not asked again by the next polls, and
    # without a token nothing that changes state shows.
    wait(browser).until(ec.visibility_of_element_located((By.ID, "token-input")))
    button(browser, "Cancel").click()
    time.sleep(6)
    assert not browser.find_elements(By.CSS_SELECTOR, "dialog[open]")
    assert not labels(browser) & CHANGING
    browser.find_element(By.XPATH, "//button[text()='give a token']").click()
    give_token(browser, ["read-only"])
    shows(browser, written["group"])
    shows(browser, "leaseTime")
    shot(browser, "queue-read-only.png")
    assert not labels(browser) & CHANGING, labels(browser)
    open_page(browser, URL_JWT, "/groups")
    shows(browser, written["group"])
    assert not labels(browser) & CHANGING, labels(browser)
    open_page(browser, URL_JWT, "/dlq")
    shows(browser, dead)
    assert not labels(browser) & CHANGING, labels(browser)
    assert not browser.find_elements(By.CSS_SELECTOR, "main input[type=checkbox]")
    # A token that may change state sees those buttons, and no admin one.
    browser.find_element(By.XPATH, "//button[text()='change token']").click()
    give_token(browser, ["read-write"])
    open_page(browser, URL_JWT, f"/queues/{queue}")
    shows(browser, written["group"])
    button(browser, "Edit options")
    button(browser, "To beginning")
    assert "Delete" not in labels(browser)
    open_page(browser, URL_JWT, "/dlq")
    shows(browser, dead)
    row = next(r for r in browser.find_elements(By.CSS_SELECTOR, "tbody tr") if dead in r.text)
    button(browser, "Retry", row)
    # An admin's token sees the deletes too.
    browser.find_element(By.XPATH, "//button[text()='change token']").click()
    give_token(browser, ["admin"])
    open_page(browser, URL_JWT, f"/queues/{queue}")
    shows(browser, written["group"])
    button(browser, "Delete")
    # 401s are what asks for the token; nothing else may log an error.
    unexpected = [e for e in errors(browser) if "401" not in e["message"]]
    assert unexpected == []


def test_a_database_that_is_down_is_said_so(browser):
    open_page(browser, URL_DOWN, "/")
    banner = wait(browser).until(ec.visibility_of_element_located((By.CLASS_NAME, "banner")))
    assert "The database is down or unreachable" in banner.text
    shows(browser, "The database is not answering")
    shot(browser, "database-down.png")
    # The failed calls are the only errors logged.
    unexpected = [e for e in errors(browser) if "503" not in e["message"]]
    assert unexpected == []


def test_a_poisoned_dead_letter_breaks_no_page(browser):
    """Dead letters whose payloads a strict JSON parser refuses (a lone
    surrogate, nesting 200 deep, a NUL) are listed on the dead-letter page
    and the message browser like any other, with no console error."""
    queue = name("poison")
    hostile = {
        f"ps-surrogate-{uuid.uuid4().hex[:6]}": '{"t": "\\ud800 alone"}',
        f"ps-deep-{uuid.uuid4().hex[:6]}": "[" * 200 + "1" + "]" * 200,
        f"ps-nul-{uuid.uuid4().hex[:6]}": '{"s": "a\\u0000b"}',
    }
    items = ",".join('{"queue": "%s", "transactionId": "%s", "payload": %s}' % (queue, t, p)
                     for t, p in hostile.items())
    post = Request(f"{URL}/api/v1/push", data=('{"items": [' + items + ']}').encode(), method="POST",
                   headers={"content-type": "application/json"})
    assert urlopen(post).status == 201
    popped = json.loads(urlopen(f"{URL}/api/v1/pop/queue/{queue}?batch=10&wait=false").read())
    acks = [{"transactionId": m["transactionId"], "partitionId": m["partitionId"], "leaseId": m["leaseId"],
             "status": "dlq", "error": "poisoned payload"} for m in popped["messages"]]
    assert len(acks) == len(hostile), popped
    ack = Request(f"{URL}/api/v1/ack/batch", data=json.dumps({"acknowledgments": acks}).encode(), method="POST",
                  headers={"content-type": "application/json"})
    assert urlopen(ack).status == 200
    open_page(browser, URL, "/dlq")
    browser.find_element(By.ID, "dlq-queue").send_keys(queue)
    browser.find_element(By.ID, "dlq-apply").click()
    for txn in hostile:
        shows(browser, txn)
    open_page(browser, URL, "/messages")
    browser.find_element(By.ID, "msg-queue").send_keys(queue)
    browser.find_element(By.ID, "msg-browse").click()
    shows(browser, f"{queue}/Default")
    shot(browser, "dlq-poisoned.png")
    assert errors(browser) == []


def test_a_stopped_streaming_query_is_listed_with_its_state_and_deleted_from_its_page(browser):
    query = name("dash-stream")
    source = name("dash-stream-src")
    sql(
        "SELECT queen.stream_register('%s')"
        % json.dumps({"name": query, "source_queue": source, "config_hash": "h1"})
    )
    # Two state rows, written by a cycle over a batch of the source.
    sql("SELECT queen.push('%s')" % json.dumps([{"queue": source, "payload": {"v": 1}}]))
    popped = json.loads(sql(f"SELECT queen.pop('{source}', NULL, 'streams', 1, '{{}}')"))
    m = popped["messages"][0]
    query_id = sql(f"SELECT id FROM queen.stream_queries WHERE name = '{query}'")
    sql("SELECT queen.stream_cycle('%s')" % json.dumps({
        "query_id": query_id, "partition_id": m["partitionId"], "consumer_group": "streams",
        "state_ops": [{"type": "upsert", "key": "a", "value": {"acc": 1}},
                      {"type": "upsert", "key": "b", "value": {"acc": 2}}],
        "ack": {"transactionId": m["transactionId"], "leaseId": popped["leaseId"], "count": 1}}))
    open_page(browser, URL, "/streams")
    shows(browser, query)
    row = next(r for r in browser.find_elements(By.CSS_SELECTOR, "#streams tbody tr") if query in r.text)
    assert source in row.text and " 2 " in f" {row.text} ", row.text
    shot(browser, "streams.png")
    browser.execute_script("window.confirm = () => true")
    button(browser, "Delete", row).click()
    wait(browser).until(
        lambda d: all(query not in r.text for r in d.find_elements(By.CSS_SELECTOR, "#streams tbody tr"))
    )
    assert sql(f"SELECT count(*) FROM queen.stream_queries WHERE name = '{query}'") == "0"
    assert sql(f"SELECT count(*) FROM queen.stream_state WHERE query_id = '{query_id}'") == "0"
    assert errors(browser) == []
