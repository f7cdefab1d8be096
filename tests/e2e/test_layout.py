"""The session page on a laptop, a projector and a phone, measured with the elements' boxes: what
must be on one screen is, nothing scrolls sideways, timeline marks never overlap (or cover the
scrubber's thumb), the picture's labels stay inside their boxes, the legend's colours are the
picture's, and a replica on a broker that is down shows what its disk holds.

Commands go through the page's own socket (`window.kafkaLab.socket.command`), as in
test_page_is_exact.py: the forms are tested elsewhere; here only what the page shows matters."""
from __future__ import annotations

import itertools

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.helpers import new_session

pytestmark = pytest.mark.e2e

LONG_TOPIC = "clickstream.mobile-app.page-views-v2"


def command(page: Page, name: str, args: dict) -> str:
    return page.evaluate("([c, a]) => window.kafkaLab.socket.command(c, a, {discardFuture: true})"
                         ".then(() => 'ok', (e) => 'refused: ' + e.message)", [name, args])


def clock(page: Page, action: str, **extra: object) -> None:
    page.evaluate("([a, x]) => window.kafkaLab.socket.clock(a, x)", [action, extra])


def play_until_committed(page: Page, topic: str, hw: int, replicas: int) -> None:
    """Live at 10× until `replicas` rows of `topic` show high watermark `hw`, then paused."""
    clock(page, "play", speed=10)
    expect(page.locator(f"[data-replica][data-topic='{topic}'][data-hw='{hw}']")).to_have_count(replicas, timeout=20_000)
    clock(page, "pause")
    expect(page.locator("[data-clock-root]")).to_have_attribute("data-mode", "paused")


def three_brokers_with_records(page: Page, name: str) -> None:
    new_session(page, brokers=3, seed=1, name=name)
    assert command(page, "create_topic", {"topic": "t", "partitions": 3, "replication_factor": 3}) == "ok"
    assert command(page, "produce", {"topic": "t", "values": [f"v{i}" for i in range(30)], "acks": "all"}) == "ok"
    clock(page, "play", speed=10)
    page.wait_for_function("""() => Array.from(document.querySelectorAll("[data-replica][data-topic=t]"))
        .reduce((sum, row) => sum + Number(row.dataset.hw), 0) === 90""", timeout=20_000)
    clock(page, "pause")


_BOXES = """() => {
  const box = (el) => { const r = el.getBoundingClientRect(); return {top: r.top, bottom: r.bottom, left: r.left, right: r.right, height: r.height}; };
  const lines = Array.from(document.querySelectorAll("[data-log=list] .log-line")).map(box)
    .filter((r) => r.top >= 0 && r.bottom <= innerHeight);
  return {
    clock: box(document.querySelector("[data-clock-root]")),
    picture: box(document.querySelector("[data-cluster-svg]")),
    picturePanel: box(document.querySelector(".cluster-panel")),
    log: box(document.querySelector("[data-log=list]")),
    linesInView: lines.length,
    scrollWidth: document.documentElement.scrollWidth, scrollHeight: document.documentElement.scrollHeight,
    width: innerWidth, height: innerHeight,
  };
}"""


def _in_view(box: dict, boxes: dict) -> bool:
    return box["top"] >= 0 and box["bottom"] <= boxes["height"] + 0.5 and box["height"] > 0


def test_the_clock_the_picture_and_the_event_log_fit_one_screen_at_1440x900(page: Page) -> None:
    page.set_viewport_size({"width": 1440, "height": 900})
    three_brokers_with_records(page, "One screen")
    page.wait_for_timeout(500)   # the table and the log are drawn at their own pace

    boxes = page.evaluate(_BOXES)
    assert boxes["scrollHeight"] <= boxes["height"] and boxes["scrollWidth"] <= boxes["width"], boxes
    for part in ("clock", "picture", "log"):
        assert _in_view(boxes[part], boxes), (part, boxes)
    assert boxes["picture"]["bottom"] <= boxes["picturePanel"]["bottom"] + 0.5, "the picture is cut by its panel"
    assert boxes["linesInView"] >= 4, boxes
    assert page.errors == []


@pytest.mark.parametrize("width,height,projector", [(1280, 800, False), (1920, 1080, False),
                                                    (1440, 900, True), (1920, 1080, True)])
def test_other_screens_keep_the_clock_the_picture_and_the_log_in_view(page: Page, width: int, height: int,
                                                                       projector: bool) -> None:
    page.set_viewport_size({"width": width, "height": height})
    three_brokers_with_records(page, f"{width}x{height}{' projector' if projector else ''}")
    if projector:
        page.click("[data-projector]")
        expect(page.locator("html")).to_have_class("projector")
    page.wait_for_timeout(500)

    boxes = page.evaluate(_BOXES)
    assert boxes["scrollWidth"] <= boxes["width"], boxes
    assert boxes["scrollHeight"] <= boxes["height"], boxes
    assert _in_view(boxes["clock"], boxes) and _in_view(boxes["log"], boxes), boxes
    assert boxes["picture"]["top"] >= 0 and boxes["picture"]["top"] < boxes["height"] / 2, boxes
    assert boxes["linesInView"] >= 3, boxes


def test_a_phone_scrolls_down_only_and_the_picture_is_readable(page: Page) -> None:
    page.set_viewport_size({"width": 390, "height": 844})
    new_session(page, brokers=9, seed=1, name="Phone")
    assert command(page, "create_topic", {"topic": LONG_TOPIC, "partitions": 6, "replication_factor": 3}) == "ok"
    assert command(page, "produce", {"topic": LONG_TOPIC, "values": [f"v{i}" for i in range(40)], "acks": 1}) == "ok"
    clock(page, "play", speed=10)
    page.wait_for_timeout(1500)
    clock(page, "pause")
    page.wait_for_timeout(600)

    found = page.evaluate("""() => {
      const panels = [".clock", ".cluster-panel", ".controls", ".explore"].map((s) => document.querySelector(s).getBoundingClientRect());
      const boxes = Array.from(document.querySelectorAll(".broker-box"), (b) => b.getBoundingClientRect());
      const cells = Array.from(document.querySelectorAll(".cell rect"), (c) => c.getBoundingClientRect().width);
      const texts = Array.from(document.querySelectorAll(".replica-name"), (t) => parseFloat(getComputedStyle(t).fontSize)
        * t.getScreenCTM().a);
      return {scrollWidth: document.documentElement.scrollWidth, width: innerWidth,
              panelLefts: panels.map((r) => Math.round(r.left)), panelRights: panels.map((r) => r.right),
              boxLefts: boxes.map((r) => Math.round(r.left)), boxRights: boxes.map((r) => r.right),
              narrowestCell: Math.min(...cells), smallestName: Math.min(...texts)};
    }""")
    assert found["scrollWidth"] <= found["width"], found
    assert len(set(found["panelLefts"])) == 1 and max(found["panelRights"]) <= found["width"], "panels are stacked"
    assert len(set(found["boxLefts"])) == 1 and len(found["boxLefts"]) == 9, "brokers are one column"
    assert max(found["boxRights"]) <= found["width"]
    assert found["narrowestCell"] >= 20 and found["smallestName"] >= 14, found
    assert page.errors == []


def test_timeline_marks_never_overlap_and_a_cluster_lists_its_commands(page: Page) -> None:
    page.set_viewport_size({"width": 1280, "height": 800})
    new_session(page, brokers=3, seed=1, name="Marks")
    assert command(page, "create_topic", {"topic": "t", "partitions": 1, "replication_factor": 3}) == "ok"
    clock(page, "play", speed=1)
    # As the Produce form does with a rate: one command (one mark) per record.
    page.evaluate("""async () => {
      for (let i = 0; i < 60; i++) {
        await window.kafkaLab.socket.command("produce", {topic: "t", value: `r${i}`, acks: 1});
        await new Promise((r) => setTimeout(r, i % 10 === 9 ? 400 : 15));
      }
    }""")
    clock(page, "pause")
    page.wait_for_function("document.querySelectorAll('.marks .mark-cluster').length > 0", timeout=10_000)
    page.wait_for_timeout(1200)   # the newest timeline (at most one a second)

    marks = page.evaluate("""() => {
      const strip = document.querySelector("[data-clock=marks]");
      const thumb = document.querySelector("[data-clock=scrubber]").getBoundingClientRect();
      const items = Array.from(strip.querySelectorAll(":scope > .mark, :scope > .mark-cluster"), (m) => {
        const r = m.getBoundingClientRect();
        return {left: r.left, right: r.right, top: r.top, bottom: r.bottom,
                count: m.classList.contains("mark-cluster") ? Number(m.dataset.count) : 1};
      });
      return {items, scrubber: {top: thumb.top, bottom: thumb.bottom}};
    }""")
    items = sorted(marks["items"], key=lambda m: m["left"])
    assert sum(m["count"] for m in items) == 61   # create_topic and sixty records
    assert len(items) < 61
    for a, b in itertools.pairwise(items):
        assert a["right"] <= b["left"], f"marks overlap: {a} {b}"
    for m in items:
        assert m["top"] >= marks["scrubber"]["bottom"], "a mark covers the scrubber"

    cluster = page.locator(".marks .mark-cluster").first
    count = int(cluster.get_attribute("data-count"))
    assert cluster.get_attribute("title").startswith(f"{count} commands")
    cluster.click()
    listed = page.locator(".mark-list button.mark")
    expect(listed).to_have_count(min(count, 80))
    listed.first.click()
    expect(page.locator(".mark-list")).to_have_count(0)
    expect(page.locator("[data-clock-root]")).not_to_have_attribute("data-future", "0")   # rewound: commands lie ahead
    assert page.errors == []


_LABEL_PROBLEMS = """() => {
  const r = (el) => el.getBoundingClientRect();
  const inside = (a, b) => a.left >= b.left - 0.5 && a.right <= b.right + 0.5 && a.top >= b.top - 0.5 && a.bottom <= b.bottom + 0.5;
  const overlap = (a, b) => a.left < b.right - 0.5 && b.left < a.right - 0.5 && a.top < b.bottom - 0.5 && b.top < a.bottom - 0.5;
  const problems = [];
  for (const broker of document.querySelectorAll("[data-broker-id]")) {
    const box = r(broker.querySelector(".broker-box"));
    const head = [broker.querySelector(".broker-name"), ...broker.querySelectorAll(".badge-svg rect")];
    head.forEach((el, i) => {
      if (!inside(r(el), box)) problems.push(`broker ${broker.dataset.brokerId}: ${el.textContent || el.parentNode.textContent} leaves its box`);
      head.slice(i + 1).forEach((other) => { if (overlap(r(el), r(other))) problems.push(`broker ${broker.dataset.brokerId}: badges overlap`); });
    });
    for (const row of broker.querySelectorAll("[data-replica]")) {
      const bg = r(row.querySelector(".replica-bg"));
      const what = `${row.dataset.topic}-${row.dataset.partition} on ${row.dataset.broker}`;
      if (!inside(bg, box)) problems.push(`${what}: its row leaves the broker's box`);
      const labels = [":scope > .replica-name", ":scope > .isr-tag", ":scope > .leader-badge rect", ":scope > .replica-offsets",
                      ":scope > .earlier", ":scope > .lost-note"].map((s) => row.querySelector(s)).filter(Boolean);
      labels.forEach((el, i) => {
        if (!inside(r(el), bg)) problems.push(`${what}: "${el.textContent}" leaves its row`);
        labels.slice(i + 1).forEach((other) => {
          if (overlap(r(el), r(other))) problems.push(`${what}: "${el.textContent}" overlaps "${other.textContent}"`);
        });
      });
      for (const cell of row.querySelectorAll(".cell rect")) if (!inside(r(cell), bg)) problems.push(`${what}: a cell leaves its row`);
    }
  }
  const cut = Array.from(document.querySelectorAll(".replica-name")).filter((t) => t.textContent.endsWith("…"));
  const titled = cut.filter((t) => t.parentNode.querySelector(":scope > title").textContent.includes(t.parentNode.dataset.topic));
  return {problems: problems.slice(0, 20), cut: cut.length, titled: titled.length, rows: document.querySelectorAll("[data-replica]").length};
}"""


@pytest.mark.parametrize("width,height", [(1440, 900), (390, 844)])
def test_labels_stay_inside_their_boxes_with_nine_brokers_long_names_and_many_partitions(page: Page, width: int,
                                                                                        height: int) -> None:
    page.set_viewport_size({"width": width, "height": height})
    new_session(page, brokers=9, seed=1, name="Labels", config='{"offsets.topic.num.partitions": 3}')
    assert command(page, "create_topic", {"topic": LONG_TOPIC, "partitions": 8, "replication_factor": 3}) == "ok"
    assert command(page, "create_topic", {"topic": "orders", "partitions": 56, "replication_factor": 1}) == "ok"  # 64 in all
    assert command(page, "produce", {"topic": LONG_TOPIC, "partition": 0, "values": [f"v{i}" for i in range(1200)],
                                     "acks": 1}) == "ok"   # four-digit offsets, "…1k" earlier
    assert command(page, "produce", {"topic": "orders", "values": [f"o{i}" for i in range(300)], "acks": 1}) == "ok"
    clock(page, "play", speed=10)
    page.wait_for_timeout(1500)
    # Every badge a broker can wear, on one broker; another one down.
    for name, args in [("slow_broker", {"broker": 2, "delay_ms": 1500}), ("pause_fetcher", {"broker": 2}),
                       ("partition_network", {"a": "broker-2", "b": "broker-7"}), ("kill_broker", {"broker": 5, "mode": "power"})]:
        assert command(page, name, args) == "ok", name
    page.wait_for_timeout(800)
    clock(page, "pause")
    page.wait_for_timeout(1000)

    found = page.evaluate(_LABEL_PROBLEMS)
    assert found["rows"] == 8 * 3 + 56
    assert found["problems"] == []
    assert found["cut"] > 0 and found["titled"] == found["cut"], "a long name is cut with the whole of it in a <title>"
    assert page.errors == []


_LEGEND_MISMATCHES = """() => {
  const style = (el) => getComputedStyle(el);
  const swatch = (name) => document.querySelector(`[data-legend="${name}"]`);
  const drawn = {
    committed: [".cell.committed:not(.stale) rect", (el) => style(el).fill, (s) => style(s).backgroundColor],
    uncommitted: [".cell.uncommitted:not(.stale) rect", (el) => style(el).stroke, (s) => style(s).borderTopColor],
    hw: [".hw-marker line", (el) => style(el).stroke, (s) => style(s).backgroundColor],
    leo: [".leo-marker line", (el) => style(el).stroke, (s) => style(s).borderLeftColor],
    isr: [".replica.isr:not(.leader):not(.selected):not([class*=flash]) .replica-bg", (el) => `${style(el).fill} ${style(el).stroke}`,
          (s) => `${style(s).backgroundColor} ${style(s).borderTopColor}`],
    osr: [".replica.osr:not(.selected):not([class*=flash]) .replica-bg", (el) => `${style(el).fill} ${style(el).stroke}`,
          (s) => `${style(s).backgroundColor} ${style(s).borderTopColor}`],
    dead: [".replica.dead:not(.selected):not([class*=flash]) .replica-bg", (el) => `${style(el).fill} ${style(el).stroke}`,
           (s) => `${style(s).backgroundColor} ${style(s).borderTopColor}`],
    stale: [".cell.stale rect", (el) => style(el).fill, (s) => style(s).backgroundColor],
    ghost: [".cell.ghost:not(.kept) rect", (el) => style(el).fill, (s) => style(s).backgroundColor],
  };
  for (const kind of ["msg-fetch", "msg-fetch-resp", "msg-produce", "msg-produce-resp", "msg-control", "msg-epoch", "msg-other"]) {
    drawn[kind] = [`.message.${kind} circle`, (el) => style(el).fill, (s) => style(s).backgroundColor];
    drawn[`${kind} trail`] = [`.trail.${kind}:not(.lost)`, (el) => style(el).stroke, (s) => style(s).backgroundColor, kind];
  }
  const checked = [];
  const mismatches = [];
  for (const [name, [selector, picture, legend, swatchName]] of Object.entries(drawn)) {
    const el = document.querySelector(selector);
    if (!el) continue;
    checked.push(name);
    const want = legend(swatch(swatchName || name));
    if (picture(el) !== want) mismatches.push(`${name}: drawn ${picture(el)}, legend ${want}`);
  }
  return {checked, mismatches};
}"""


def test_the_legend_shows_the_colours_the_picture_draws(page: Page) -> None:
    new_session(page, brokers=3, seed=1, name="Legend", config='{"replica.lag.time.max.ms": 2000}')
    assert command(page, "create_topic", {"topic": "t", "partitions": 1, "replication_factor": 3}) == "ok"
    assert command(page, "produce", {"topic": "t", "values": [f"v{i}" for i in range(5)], "acks": 1}) == "ok"
    play_until_committed(page, "t", 5, 3)
    checked: set[str] = set()
    mismatches: list[str] = []

    def look() -> None:
        found = page.evaluate(_LEGEND_MISMATCHES)
        checked.update(found["checked"])
        mismatches.extend(found["mismatches"])

    # Records on the leader only: not committed yet.
    assert command(page, "produce", {"topic": "t", "values": ["a", "b"], "acks": 1}) == "ok"
    page.select_option("[data-clock=kind]", "records_appended")
    page.click("[data-clock=step-until]")
    expect(page.locator("[data-replica] .cell[data-committed=false]").first).to_be_attached()
    look()
    # Requests in flight, while the clock plays.
    clock(page, "play", speed=0.3)
    for _ in range(12):
        page.wait_for_timeout(150)
        look()
    # A follower that stopped fetching drops out of the ISR; another broker goes down.
    leader = page.locator("[data-partition-summary='t-0']").get_attribute("data-leader")
    followers = [b for b in ("1", "2", "3") if b != leader]
    assert command(page, "pause_fetcher", {"broker": int(followers[0])}) == "ok"
    assert command(page, "produce", {"topic": "t", "values": ["c", "d"], "acks": 1}) == "ok"   # it falls behind
    clock(page, "play", speed=10)
    expect(page.locator(f"[data-replica][data-broker='{followers[0]}'][data-isr=false]")).to_have_count(1, timeout=20_000)
    assert command(page, "kill_broker", {"broker": int(followers[1]), "mode": "process"}) == "ok"
    clock(page, "pause")
    expect(page.locator(f"[data-replica][data-broker='{followers[1]}'][data-alive=false]")).to_have_count(1)
    page.wait_for_timeout(2000)   # the ISR change's and the crash's flashes are over
    look()

    assert mismatches == []
    assert {"committed", "uncommitted", "hw", "leo", "isr", "osr", "dead", "stale"} <= checked, checked
    assert any(name.startswith("msg-") for name in checked), checked


def test_a_replica_on_a_broker_that_is_down_shows_what_its_disk_holds(page: Page) -> None:
    new_session(page, brokers=3, seed=1, name="Down")
    assert command(page, "create_topic", {"topic": "t", "partitions": 1, "replication_factor": 3}) == "ok"
    assert command(page, "produce", {"topic": "t", "values": [f"v{i}" for i in range(12)], "acks": "all"}) == "ok"
    play_until_committed(page, "t", 12, 3)
    leader = page.locator("[data-partition-summary='t-0']").get_attribute("data-leader")
    killed = [b for b in ("1", "2", "3") if b != leader]
    assert command(page, "kill_broker", {"broker": int(killed[0]), "mode": "process"}) == "ok"
    assert command(page, "kill_broker", {"broker": int(killed[1]), "mode": "power"}) == "ok"
    for broker in killed:
        expect(page.locator(f"[data-replica][data-broker='{broker}']")).to_have_attribute("data-alive", "false")
    page.wait_for_timeout(400)

    for broker in killed:
        rep = page.evaluate("""(b) => { const p = window.kafkaLab.app.view.partitions.values().next().value;
                                        const r = p.replicaStates.get(b);
                                        return {leo: r.log_end_offset, hw: r.high_watermark, lost: r.lost_on_crash || 0,
                                                onDisk: r.on_disk}; }""", int(broker))
        row = page.locator(f"[data-replica][data-broker='{broker}']")
        expect(row).to_have_attribute("data-leo", str(rep["leo"]))
        expect(row.locator(".replica-offsets")).to_have_text(f"LEO {rep['leo']} · HW {rep['hw']} on disk")
        expect(row.locator(".isr-tag")).to_have_text("down")
        described = row.get_attribute("aria-label")
        assert f"on disk: LEO {rep['leo']}, HW {rep['hw']}" in described
        if rep["lost"]:
            assert f"lost {rep['lost']} unflushed on power loss" in described
            expect(row.locator(".lost-note")).to_contain_text(f"lost {rep['lost']} unflushed")
    process_row = page.locator(f"[data-replica][data-broker='{killed[0]}']")
    expect(process_row).to_have_attribute("data-leo", "12")   # a process crash keeps every written record
    expect(process_row.locator(".cell.stale")).not_to_have_count(0)
    assert page.errors == []
