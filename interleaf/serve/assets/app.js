// Interleaf's page: ask (the answer streams in), open a citation (its quote and page, the box
// drawn), list documents, upload a PDF. Document text only ever goes in through textContent; the
// answer's HTML comes rendered and escaped by the server (interleaf/render/html.py).
"use strict";
(() => {
  const $ = (id) => document.getElementById(id);
  const keyInput = $("key");
  keyInput.value = sessionStorage.getItem("interleaf-key") || "";
  keyInput.addEventListener("change", () => {
    sessionStorage.setItem("interleaf-key", keyInput.value.trim());
    loadDocuments();
  });
  if (document.body.dataset.readAccess === "keyed") keyInput.placeholder = "needed to ask and read";
  const key = () => keyInput.value.trim();
  const headers = (extra = {}) => (key() ? { ...extra, Authorization: `Bearer ${key()}` } : extra);

  async function api(path, options = {}) {
    const response = await fetch(path, { ...options, headers: headers(options.headers || {}) });
    const body = await response.json().catch(() => ({}));
    if (!response.ok) throw new Error((body.error && body.error.message) || `HTTP ${response.status}`);
    return body;
  }

  // Images need the key when reading is keyed: fetched with it and shown from a blob.
  async function showImage(img, url) {
    if (!key()) {
      img.src = url;
      return;
    }
    const response = await fetch(url, { headers: headers() });
    if (response.ok) img.src = URL.createObjectURL(await response.blob());
  }

  function setText(el, text) {
    el.textContent = text == null ? "" : String(text);
  }

  // -- health and documents ---------------------------------------------------------------------
  async function loadHealth() {
    try {
      const h = await (await fetch("/healthz")).json();
      setText($("health"), `${h.documents} documents · ${h.index.quotes} quotes indexed` + (h.jobs ? ` · ${h.jobs} ingesting` : ""));
    } catch (e) {
      setText($("health"), "server unreachable");
    }
  }

  let documents = [];
  async function loadDocuments() {
    loadHealth();
    try {
      documents = (await api("/v1/documents")).data;
    } catch (e) {
      setText($("upload-status"), e.message);
      return;
    }
    const body = $("documents").tBodies[0];
    body.replaceChildren();
    const filter = $("doc-filter");
    const chosen = new Set(selectedDocuments());
    filter.replaceChildren();
    for (const d of documents) {
      const row = body.insertRow();
      row.className = `doc-${d.status}`;
      setText(row.insertCell(), d.name);
      setText(row.insertCell(), d.pages || "");
      const status = row.insertCell();
      status.className = "status";
      if (d.status === "rejected") setText(status, `rejected: ${d.reason}`);
      else if (d.status === "ingesting") setText(status, `ingesting ${Math.round(100 * d.job.progress)}%`);
      else setText(status, "ingested");
      if (d.status !== "ingested") continue;
      const label = document.createElement("label");
      const box = document.createElement("input");
      box.type = "checkbox";
      box.value = d.doc_id;
      box.checked = chosen.has(d.doc_id);
      box.addEventListener("change", summarizeFilter);
      label.append(box, document.createTextNode(` ${d.name}`));
      filter.append(label);
    }
    summarizeFilter();
  }

  function selectedDocuments() {
    return [...document.querySelectorAll("#doc-filter input:checked")].map((b) => b.value);
  }

  function summarizeFilter() {
    const n = selectedDocuments().length;
    setText($("doc-filter-summary"), n ? `${n} selected` : "all");
  }

  // -- asking -------------------------------------------------------------------------------------
  let citations = [];

  async function* events(response) {
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    let buffer = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      let end;
      while ((end = buffer.indexOf("\n\n")) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        let name = "message";
        const data = [];
        for (const line of block.split("\n")) {
          if (line.startsWith("event: ")) name = line.slice(7);
          else if (line.startsWith("data: ")) data.push(line.slice(6));
        }
        yield [name, JSON.parse(data.join("\n"))];
      }
    }
  }

  function fail(message) {
    setText($("ask-error"), message);
    $("ask-error").hidden = false;
    setText($("answer-state"), "");
  }

  $("ask-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    const question = $("question").value;
    $("ask-error").hidden = true;
    $("answer").hidden = false;
    $("citations-title").hidden = true;
    setText($("answer-question"), question);
    setText($("answer-state"), "Searching the documents…");
    setText($("answer-stream"), "");
    $("answer-body").replaceChildren();
    $("citations").replaceChildren();
    setText($("answer-meta"), "");
    $("ask-button").disabled = true;
    try {
      const response = await fetch("/v1/ask", {
        method: "POST",
        headers: headers({ "Content-Type": "application/json" }),
        body: JSON.stringify({ question, documents: selectedDocuments(), stream: true, html: true }),
      });
      if (!response.ok) {
        const body = await response.json().catch(() => ({}));
        fail((body.error && body.error.message) || `HTTP ${response.status}`);
        return;
      }
      for await (const [name, data] of events(response)) {
        if (name === "token") {
          setText($("answer-state"), "Writing…");
          $("answer-stream").textContent += data.text;
        } else if (name === "answer") showAnswer(data);
        else if (name === "error") fail(data.error.message);
      }
    } catch (e) {
      fail(e.message);
    } finally {
      $("ask-button").disabled = false;
    }
  });

  function showAnswer(answer) {
    citations = answer.citations;
    setText($("answer-stream"), "");
    setText($("answer-state"), answer.answerable === false ? `The documents do not say: ${answer.abstain_reason || ""}` : "");
    // the server's HTML: parsed inert in a template, images pointed at this server (with the key when needed)
    const template = document.createElement("template");
    template.innerHTML = answer.answer_html;
    const images = [...template.content.querySelectorAll("img")].map((img) => {
      const url = img.getAttribute("src");
      img.removeAttribute("src");
      return [img, url];
    });
    $("answer-body").replaceChildren(template.content);
    for (const [img, url] of images) showImage(img, url);
    const list = $("citations");
    for (const c of citations) {
      const item = document.createElement("li");
      const link = document.createElement("a");
      link.href = "#";
      link.className = "citation";
      link.dataset.label = c.label;
      setText(link, `${c.label} ${c.document} p.${c.page}`);
      link.addEventListener("click", (e) => {
        e.preventDefault();
        openQuote(c);
      });
      const verdict = document.createElement("span");
      verdict.className = c.supported === false ? "unsupported" : "supported";
      setText(verdict, c.supported === false ? " unsupported" : "");
      item.append(link, verdict);
      list.append(item);
    }
    $("citations-title").hidden = !citations.length;
    const t = answer.timing;
    setText($("answer-meta"), `${answer.generator.name} · ${t.seconds.toFixed(2)} s` + (t.stored ? " · stored answer" : ""));
  }

  // `#a-t3` is text quote 3 ([3]), `#a-i2` image 2 (image2)
  $("answer-body").addEventListener("click", (event) => {
    const link = event.target.closest("a.cite");
    if (!link) return;
    event.preventDefault();
    const m = /-(t|i)(\d+)$/.exec(link.hash);
    if (!m) return;
    const label = m[1] === "t" ? `[${m[2]}]` : `image${m[2]}`;
    const found = citations.find((c) => c.label === label);
    if (found) openQuote(found);
  });

  function openQuote(c) {
    const panel = $("quote-panel");
    setText($("quote-title"), `${c.label} · ${c.document}, page ${c.page}`);
    const verdict = c.supported === false ? `not supported: ${c.reasons.join("; ")}` : "supports its sentence";
    setText($("quote-meta"), `${c.kind} · ${verdict}`);
    setText($("quote-text"), c.text);
    const img = $("quote-page");
    img.alt = `${c.document}, page ${c.page}, the quote's box drawn`;
    img.removeAttribute("src");
    showImage(img, c.page_url);
    panel.hidden = false;
    panel.scrollIntoView({ block: "nearest" });
  }
  $("quote-close").addEventListener("click", () => {
    $("quote-panel").hidden = true;
  });

  // -- uploading ----------------------------------------------------------------------------------
  $("upload-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const file = $("upload-file").files[0];
    if (!file) return;
    const bar = $("upload-progress");
    bar.hidden = false;
    bar.value = 0;
    const xhr = new XMLHttpRequest();
    xhr.open("POST", `/v1/documents?filename=${encodeURIComponent(file.name)}`);
    for (const [name, value] of Object.entries(headers({ "Content-Type": "application/pdf" }))) xhr.setRequestHeader(name, value);
    xhr.upload.addEventListener("progress", (e) => {
      if (e.lengthComputable) bar.value = (0.3 * e.loaded) / e.total;
      setText($("upload-status"), "uploading…");
    });
    xhr.addEventListener("load", () => {
      let body = {};
      try {
        body = JSON.parse(xhr.responseText);
      } catch (e) {}
      if (xhr.status >= 300) {
        setText($("upload-status"), (body.error && body.error.message) || `HTTP ${xhr.status}`);
        bar.hidden = true;
        return;
      }
      followJob(body);
    });
    xhr.addEventListener("error", () => setText($("upload-status"), "upload failed: the server cannot be reached"));
    xhr.send(file);
  });

  function followJob(job) {
    const bar = $("upload-progress");
    bar.value = 0.3 + 0.7 * job.progress;
    const stages = Object.entries(job.stages || {}).filter(([, done]) => done).map(([name]) => name);
    const states = { queued: "queued", ingesting: "ingesting", loading: "loading the new index", done: "ingested" };
    let text = `${job.name}: ${states[job.state] || job.state}`;
    if (job.state === "ingesting" && stages.length) text += ` (${stages.join(", ")} done)`;
    if (job.message) text += ` — ${job.message}`;
    setText($("upload-status"), text);
    $("upload-status").dataset.state = job.state;
    if (["done", "rejected", "failed"].includes(job.state)) {
      bar.hidden = job.state !== "done";
      loadDocuments();
      return;
    }
    loadDocuments();
    setTimeout(async () => {
      try {
        followJob(await api(`/v1/jobs/${job.id}`));
      } catch (e) {
        setText($("upload-status"), e.message);
      }
    }, 1000);
  }

  loadDocuments();
})();
