// compatd status page: the only script, served from /ui/app.js (the
// Content-Security-Policy allows no other). Everything works without it; it
// reloads the page when the catalog generation changes and filters the
// feature gate table as one types.
(function () {
  'use strict';

  var generation = document.body.getAttribute('data-generation');
  var live = document.getElementById('live');
  if (generation !== null && window.fetch) {
    var poll = function () {
      fetch('/ui/status.json', {cache: 'no-store', credentials: 'omit'})
        .then(function (r) {
          return r.ok ? r.json() : null;
        })
        .then(function (status) {
          if (status && String(status.generation) !== generation) {
            window.location.reload();
            return;
          }
          if (live) live.textContent = 'Watching for catalog changes.';
          window.setTimeout(poll, 5000);
        })
        .catch(function () {
          if (live) live.textContent = 'compatd does not answer; retrying.';
          window.setTimeout(poll, 15000);
        });
    };
    window.setTimeout(poll, 5000);
    if (live) live.textContent = 'Watching for catalog changes.';
  }

  var form = document.getElementById('feature-filter');
  var table = document.getElementById('gates');
  if (form && table) {
    var rows = table.tBodies[0].rows;
    var count = document.getElementById('gate-count');
    var total = count ? count.getAttribute('data-total') : null;
    var apply = function (event) {
      if (String(rows.length) !== total) {
        // The server filtered this page: widening needs the server's rows.
        if (event.type === 'change') form.submit();
        return;
      }
      var needle = form.elements.q.value.trim().toLowerCase();
      var component = form.elements.component.value;
      var stage = form.elements.stage.value;
      var shown = 0;
      for (var i = 0; i < rows.length; i++) {
        var row = rows[i];
        var ok = (!needle ||
                  row.getAttribute('data-name').toLowerCase().indexOf(needle) >= 0) &&
                 (!component || row.getAttribute('data-component') === component) &&
                 (!stage || row.getAttribute('data-stage') === stage);
        row.hidden = !ok;
        if (ok) shown++;
      }
      if (count) count.textContent = shown + ' of ' + total + ' gates shown.';
      var query = new URLSearchParams();
      if (needle) query.set('q', form.elements.q.value.trim());
      if (component) query.set('component', component);
      if (stage) query.set('stage', stage);
      var search = query.toString();
      window.history.replaceState(null, '', '/ui/features' + (search ? '?' + search : '') +
                                  window.location.hash);
    };
    form.elements.q.addEventListener('input', apply);
    form.elements.component.addEventListener('change', apply);
    form.elements.stage.addEventListener('change', apply);
  }
})();
