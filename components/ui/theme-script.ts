export const THEME_KEY = 'poolscope-theme';

/** Inline script for the root layout: applies the stored theme before the first paint. */
export const THEME_SCRIPT = `try{var t=localStorage.getItem('${THEME_KEY}');var d=t==='dark'||(t!=='light'&&matchMedia('(prefers-color-scheme: dark)').matches);document.documentElement.classList.toggle('dark',d)}catch(e){}`;
