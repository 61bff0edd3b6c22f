/** `auth enable|disable|list|tune` (`login` is with the token verbs). */
import type { Command } from './command.js';
import { disable, enable, listMounts, tune } from './mount-commands.js';

export const authVerbs: Record<string, Command> = {
  'auth enable': enable('auth'),
  'auth disable': disable('auth'),
  'auth list': listMounts('auth'),
  'auth tune': tune('auth'),
};
