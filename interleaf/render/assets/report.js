(() => {
  const open = (id) => {
    const card = id && document.getElementById(id);
    if (card && card.tagName === "DETAILS") {
      card.open = true;
      card.classList.add("flash");
      setTimeout(() => card.classList.remove("flash"), 1500);
    }
  };
  document.addEventListener("click", (event) => {
    const link = event.target.closest("a.cite");
    if (link) open(decodeURIComponent(link.hash.slice(1)));
  });
  window.addEventListener("hashchange", () => open(decodeURIComponent(location.hash.slice(1))));
  // a page cited several times is embedded once; its other places borrow the first one's data
  document.querySelectorAll("img[data-same-as]").forEach((img) => {
    const first = document.getElementById(img.dataset.sameAs);
    if (first) img.src = first.src;
  });
  open(decodeURIComponent(location.hash.slice(1)));
})();
