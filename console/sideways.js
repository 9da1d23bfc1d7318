import { html, useEffect, useRef, useState } from './vendor/preact.js';

/**
 * A region that scrolls sideways, keyboard-focusable, with a cue when it holds more than it shows:
 * a line saying so (`cue`, its element's id `cueId`) and a shade on the side that has more.
 * `inner` is the class of the scrolling element; `watch` measures again when it changes.
 */
export function Sideways({ label, cue, cueId = 'scroll-cue', inner = 'board', watch, children }) {
  const region = useRef(null);
  const [sides, setSides] = useState({ left: false, right: false });
  const measure = () => {
    const box = region.current;
    if (!box) return;
    const left = box.scrollLeft > 1;
    const right = box.scrollLeft + box.clientWidth < box.scrollWidth - 1;
    setSides((known) => (known.left === left && known.right === right ? known : { left, right }));
  };
  useEffect(() => {
    measure();
    const observer = new ResizeObserver(measure);
    observer.observe(region.current);
    return () => observer.disconnect();
  }, [watch]);
  const overflows = sides.left || sides.right;
  const frame = ['sideways', sides.left && 'more-left', sides.right && 'more-right'].filter(Boolean).join(' ');
  return html`
    ${overflows && html`<p class="scroll-cue" id=${cueId}>${cue}</p>`}
    <div class=${frame}>
      <div class=${inner} ref=${region} tabindex="0" role="region" aria-label=${label}
        aria-describedby=${overflows ? cueId : undefined} onScroll=${measure}>${children}</div>
    </div>`;
}
