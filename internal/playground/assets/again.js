// The page asked for without its token: a reload (the page took the token
// out of the address bar and keeps it in this tab's session storage). Go
// back to the page with it, once; a token that was refused is forgotten.
(function () {
  var key = 'tapedeck-play-token';
  var tried = /[?&]token=/.test(location.search);
  try {
    var t = sessionStorage.getItem(key);
    if (t && !tried) {
      location.replace('/?token=' + encodeURIComponent(t));
      return;
    }
    sessionStorage.removeItem(key);
  } catch (e) { /* no session storage: nothing to bring back */ }
  document.body.dataset.refused = 'yes';
})();
