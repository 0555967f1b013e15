/**
 * Runs an Argo CD health script (Lua) against an object, in fengari (Lua 5.3 in JavaScript). Argo CD itself runs
 * gopher-lua (5.1); the scripts use only what both have (tables, ipairs, comparisons, `or`).
 */
import { createRequire } from 'node:module';

// fengari ships no types; its C-like API is used through a handful of calls.
const require = createRequire(import.meta.url);
const { lua, lauxlib, lualib, to_luastring, to_jsstring } = require('fengari');

export interface Health {
  readonly status: string;
  readonly message: string;
}

function push(L: unknown, value: unknown): void {
  if (value === null || value === undefined) lua.lua_pushnil(L);
  else if (typeof value === 'boolean') lua.lua_pushboolean(L, value);
  else if (typeof value === 'number')
    Number.isInteger(value) ? lua.lua_pushinteger(L, value) : lua.lua_pushnumber(L, value);
  else if (typeof value === 'string') lua.lua_pushstring(L, to_luastring(value));
  else if (Array.isArray(value)) {
    lua.lua_createtable(L, value.length, 0);
    value.forEach((item, index) => {
      push(L, item);
      lua.lua_rawseti(L, -2, index + 1);
    });
  } else {
    lua.lua_newtable(L);
    for (const [key, item] of Object.entries(value as Record<string, unknown>)) {
      push(L, item);
      lua.lua_setfield(L, -2, to_luastring(key));
    }
  }
}

function field(L: unknown, name: string): string {
  lua.lua_getfield(L, -1, to_luastring(name));
  const text = lua.lua_isstring(L, -1) ? to_jsstring(lua.lua_tostring(L, -1)) : '';
  lua.lua_pop(L, 1);
  return text;
}

/** The health the script returns for `obj`; throws with Lua's message when the script fails. */
export function runHealthScript(script: string, obj: unknown): Health {
  const L = lauxlib.luaL_newstate();
  lualib.luaL_openlibs(L);
  push(L, obj);
  lua.lua_setglobal(L, to_luastring('obj'));
  if (
    lauxlib.luaL_loadstring(L, to_luastring(script)) !== lua.LUA_OK ||
    lua.lua_pcall(L, 0, 1, 0) !== lua.LUA_OK
  )
    throw new Error(to_jsstring(lua.lua_tostring(L, -1)));
  if (!lua.lua_istable(L, -1)) throw new Error('the health script returned no table');
  return { status: field(L, 'status'), message: field(L, 'message') };
}
