/** Leave the focus on the page's body, as a browser does when the focused button is disabled
 * (jsdom keeps the focus on a disabled button). */
export function dropFocus() {
  const elsewhere = document.body.appendChild(document.createElement("button"));
  elsewhere.focus();
  elsewhere.remove();
  expect(document.activeElement).toBe(document.body);
}
