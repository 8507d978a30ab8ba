// Submits a form that carries out a decision already made (RP logout with a valid id_token_hint).
// An external file: hosted pages run no inline script.
document.addEventListener("DOMContentLoaded", function () {
  var form = document.querySelector("form[data-auto-submit]");
  if (form) form.submit();
});
