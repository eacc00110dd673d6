// The app's page carries replay's sandbox, which has no allow-forms (policy.ts), so pressing Enter
// in ReplayWeb.page's own fields (the replay bar's URL, a title being edited) submits nothing: a
// sandboxed form is refused before its submit event fires. This script gives the form that event
// itself, which the app's handler takes and cancels (it navigates inside the archive), as implicit
// submission would have. It sends nothing anywhere: a synthetic submit event submits no form.
const SCRIPT = `<script>
document.addEventListener('keydown', (e) => {
  if (e.key !== 'Enter' || e.isComposing) return;
  const field = e.composedPath()[0];
  if (!(field instanceof HTMLInputElement) || field.form === null) return;
  e.preventDefault();
  field.form.dispatchEvent(new SubmitEvent('submit', { bubbles: true, cancelable: true, composed: true }));
}, true);
</script>`;

/** ReplayWeb.page's index.html with the script above at the start of its head. */
export function withAppForms(indexHtml: string): string {
  const head = /<head[^>]*>/i.exec(indexHtml);
  if (head === null) throw new Error("ReplayWeb.page's index.html has no <head>");
  const at = head.index + head[0].length;
  return indexHtml.slice(0, at) + SCRIPT + indexHtml.slice(at);
}
