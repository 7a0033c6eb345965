import { ComponentChildren } from 'preact';

/**
 * What failed, said to the user: styled as an error and announced (role alert). Nothing when there is no message.
 * `inline` inside a label or a line of text; `children` (an action: Dismiss, Apply anyway) follow the message.
 */
export function ErrorAlert({ message, inline = false, children }: { message: string | null | undefined; inline?: boolean; children?: ComponentChildren }) {
  if (!message) return null;
  const Tag = inline ? 'span' : 'p';
  return (
    <Tag class="error" role="alert">
      {message}
      {children ? <> {children}</> : null}
    </Tag>
  );
}
