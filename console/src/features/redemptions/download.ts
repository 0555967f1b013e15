/** Offers `text` as a file download: a temporary object URL clicked through a hidden link. */
export function downloadTextFile(filename: string, text: string): void {
  const url = URL.createObjectURL(new Blob([text], { type: 'text/plain;charset=utf-8' }));
  const link = document.createElement('a');
  link.href = url;
  link.download = filename;
  link.style.display = 'none';
  document.body.append(link);
  link.click();
  link.remove();
  // some browsers read the URL after click() returns; free it on the next turn
  setTimeout(() => URL.revokeObjectURL(url), 0);
}
