import { LabIcon } from '@jupyterlab/ui-components';

/**
 * A kale leaf; `jp-icon3` makes it follow the theme.
 */
export const kaleIcon = new LabIcon({
  name: 'kale-ext:kale',
  svgstr:
    '<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16" viewBox="0 0 24 24">' +
    '<path class="jp-icon3" fill="#616161" d="M12 2C6.5 6.5 4 10.5 4 14.5 4 19 7.6 22 12 22s8-3 8-7.5C20 10.5 17.5 6.5 12 2zm1 17.9V11h-2v8.9a5.6 5.6 0 0 1-5-5.4c0-2.8 1.8-5.9 6-9.8 4.2 3.9 6 7 6 9.8a5.6 5.6 0 0 1-5 5.4z"/>' +
    '</svg>'
});
