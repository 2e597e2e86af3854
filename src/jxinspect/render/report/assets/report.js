(function () {
  // Large program texts come gzip-compressed (base64) and are unpacked here, after the
  // page (its summary, findings and tables) is shown.
  var unpacked = Promise.all(Array.prototype.map.call(
    document.querySelectorAll('script.packed'), function (packed) {
      var bytes = Uint8Array.from(atob(packed.textContent), function (c) {
        return c.charCodeAt(0);
      });
      var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream('gzip'));
      return new Response(stream).text().then(function (html) {
        var pre = document.getElementById(packed.dataset.for);
        pre.innerHTML = html;
        pre.classList.remove('packing');
        pre.dispatchEvent(new Event('unpacked'));
      });
    }));

  'use strict';
  function applyFilter(box) {
    var table = document.getElementById(box.dataset.table);
    var text = box.querySelector('input[type=search]').value.trim().toLowerCase();
    var on = {};
    box.querySelectorAll('input[type=checkbox]').forEach(function (c) { on[c.value] = c.checked; });
    var rows = table.tBodies[0].rows, shown = 0;
    for (var i = 0; i < rows.length; i++) {
      var r = rows[i];
      var keep = on[r.dataset.status] !== false &&
        (!text || r.textContent.toLowerCase().indexOf(text) >= 0);
      r.hidden = !keep;
      if (keep) shown++;
    }
    box.querySelector('.shown').textContent = shown + ' of ' + rows.length + ' shown';
  }
  document.querySelectorAll('.filters').forEach(function (box) {
    box.querySelectorAll('input').forEach(function (input) {
      input.addEventListener(input.type === 'search' ? 'input' : 'change', function () {
        applyFilter(box);
      });
    });
    applyFilter(box);
  });

  function reveal(id) {
    var el = document.getElementById(id);
    if (!el) return;
    if (el.tagName === 'TR' && el.hidden) {
      var box = document.querySelector('.filters[data-table="' + el.closest('table').id + '"]');
      box.querySelector('input[type=search]').value = '';
      box.querySelectorAll('input[type=checkbox]').forEach(function (c) { c.checked = true; });
      applyFilter(box);
    }
    for (var d = el.closest('details'); d; d = d.parentElement.closest('details')) d.open = true;
    el.scrollIntoView({block: 'center'});
    el.classList.remove('flash');
    void el.offsetWidth;
    el.classList.add('flash');
  }
  function revealSoon(id) {
    if (document.getElementById(id)) reveal(id);
    else unpacked.then(function () { reveal(id); });
  }
  window.addEventListener('hashchange', function () { revealSoon(location.hash.slice(1)); });
  document.addEventListener('click', function (e) {
    var a = e.target.closest('a[href^="#"]');
    if (a) revealSoon(a.getAttribute('href').slice(1));
  });
  if (location.hash) revealSoon(location.hash.slice(1));

  document.querySelectorAll('.code-section').forEach(function (section) {
    var input = section.querySelector('.codebar input');
    var count = section.querySelector('.hits');
    var lines = section.querySelectorAll('pre.code .l');
    section.querySelector('pre.code').addEventListener('unpacked', function () {
      lines = section.querySelectorAll('pre.code .l'); lower = null; search();
    });
    var lower = null, hits = [], current = -1, timer = null;
    function clear() {
      hits.forEach(function (l) { l.classList.remove('hit', 'current'); });
      hits = []; current = -1;
    }
    function search() {
      clear();
      var q = input.value.toLowerCase();
      if (!q) { count.textContent = ''; return; }
      if (!lower) lower = Array.prototype.map.call(lines, function (l) {
        return l.textContent.toLowerCase();
      });
      for (var i = 0; i < lower.length; i++) {
        if (lower[i].indexOf(q) >= 0) { lines[i].classList.add('hit'); hits.push(lines[i]); }
      }
      count.textContent = hits.length + (hits.length === 1 ? ' match' : ' matches');
      if (hits.length) go(1);
    }
    function go(step) {
      if (!hits.length) return;
      if (current >= 0) hits[current].classList.remove('current');
      current = (current + step + hits.length) % hits.length;
      hits[current].classList.add('current');
      hits[current].scrollIntoView({block: 'center'});
      count.textContent = (current + 1) + ' of ' + hits.length;
    }
    input.addEventListener('input', function () {
      clearTimeout(timer); timer = setTimeout(search, lines.length > 20000 ? 250 : 60);
    });
    input.addEventListener('keydown', function (e) {
      if (e.key === 'Enter') { e.preventDefault(); go(e.shiftKey ? -1 : 1); }
    });
    section.querySelector('.next').addEventListener('click', function () { go(1); });
    section.querySelector('.prev').addEventListener('click', function () { go(-1); });
  });
})();
